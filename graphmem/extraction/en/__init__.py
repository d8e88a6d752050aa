"""English extraction rules."""
