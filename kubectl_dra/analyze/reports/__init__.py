"""One module per command, each from a Snapshot and Semantics to a Report: explain.py (explain pod, explain claim,
match claim; bodies.py the parts of their bodies they share), status.py (`status`), inventory.py (`devices`), workload.py (`explain
deploy/NAME` with no pods), replicas.py (`explain deploy/NAME --replicas N`), and targets.py (what a command is
asked about: the pods -l picks, match's claim, devices' filters). They compose pod/ and the queue (queue/, to which
they hand explain_pod for the other pending pods); nothing below imports them."""
