# cel-expr-python (the cel-cpp bindings) is a namespace package of native extension modules
# without an __init__.py. PyInstaller runs no hook for a namespace package, so this hook hangs
# off the `cel` extension module that every user of the engine imports. It adds what the
# bytecode scan cannot see:
# - the extension modules (ext_strings, ext_optional, ext_bindings, ...), loaded by name;
# - the protobuf runtime that the native `cel` module imports from C
#   (google.protobuf.descriptor_pool / message_factory, backed by google._upb._message).
from PyInstaller.utils.hooks import collect_submodules

# (collect_submodules does not descend from the namespace package into its `ext` subpackage.)
hiddenimports = collect_submodules("cel_expr_python") + collect_submodules("cel_expr_python.ext") + [
    "google.protobuf.descriptor_pool",
    "google.protobuf.message_factory",
    "google.protobuf.descriptor_pb2",
    "google.protobuf.struct_pb2",
    "google.protobuf.duration_pb2",
    "google.protobuf.timestamp_pb2",
    "google.protobuf.wrappers_pb2",
    "google.protobuf.any_pb2",
    "google._upb._message",
]
