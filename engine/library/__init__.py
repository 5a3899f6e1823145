"""The scenario library: versioned scenarios in one SQLite file that can be shared."""
