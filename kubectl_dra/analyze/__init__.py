"""Pure analysis: Snapshot in, Report out. No I/O, no click, no rich, no kubernetes client."""
