"""The Script room: every block of the volume in one table (the Script dock)."""
