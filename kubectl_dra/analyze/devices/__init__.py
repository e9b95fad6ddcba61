"""Every published device, and why not: the device universe as this version's allocator gathers pools
(universe.py), the per-device checks in the allocator's order (checks.py: explain's device table, the first reason
each device cannot be used), and upstream's own per-pool counts (pool_status.py). Reads allocator/ only."""
