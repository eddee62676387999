"""The build steps, per-file reuse, the LanceDB table, the audit and the invariant checks."""
