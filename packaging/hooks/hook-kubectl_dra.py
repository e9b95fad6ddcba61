# Bundle every kubectl_dra module and data file, including those the CLI imports lazily
# (kubectl-dra keeps the kubernetes client and the CEL engine off the --help/offline path).
from PyInstaller.utils.hooks import collect_data_files, collect_submodules

hiddenimports = collect_submodules("kubectl_dra")
datas = collect_data_files("kubectl_dra")
