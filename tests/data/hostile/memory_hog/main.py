"""Hostile: allocates and touches 2 GiB (a str is filled, so every page is really used)."""

hog = "x" * (2 << 30)
print(len(hog))
