"""Kubernetes' CEL libraries as Python functions for cel-cpp, one module per upstream library file
(k8s.io/apiserver/pkg/cel/library/*.go; ``includes`` from k8s.io/dynamic-resource-allocation/cel; cel-go's ext
strings where cel-cpp differs).  ``values`` holds what they share.

cel-cpp keys runtime overloads by argument *kind* and all messages share one kind, so every
function name gets exactly one implementation per kind signature: the typed overloads the checker
needs are declared without an implementation, plus one hidden overload on the never-constructed
``kubernetes.ImplDispatch`` message (or DYN) that carries the implementation, which dispatches on
the Python class.
"""
