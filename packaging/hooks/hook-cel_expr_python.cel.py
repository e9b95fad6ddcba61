# cel-expr-python (the cel-cpp bindings) is a namespace package of native extension modules
# without an __init__.py; PyInstaller runs no hook for a namespace package, so this hook hangs
# off the `cel` extension module that every user of the engine imports. It adds what the
# bytecode scan cannot see: the protobuf runtime that the native `cel` module imports from C
# (google.protobuf.descriptor_pool / message_factory, backed by google._upb._message).
#
# The optional extension modules (cel_expr_python.ext.ext_strings, ...; ~6 MB each) are not
# forced in: kubectl-dra enables its CEL extensions through the EnvConfig YAML, which cel.so
# implements itself, and a Python `import` of an ext module is seen by PyInstaller's scan anyway.
# The golden scenarios run through the frozen build (tests/install) prove nothing is missing.
hiddenimports = [
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
