"""Hostile: never finishes on its own."""

import time

time.sleep(3600)
