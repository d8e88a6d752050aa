"""Chinese extraction rules."""
