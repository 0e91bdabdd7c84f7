"""Getting a user's data off disk: format, encoding and layout detection, with clear errors for files that are not tables."""
