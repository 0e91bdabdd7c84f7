"""Getting a user's data off disk: format, encoding and layout detection, and clear errors for non-tables."""
