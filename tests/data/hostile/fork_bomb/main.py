"""Hostile: forks 200 children; exit 0 means the process limit did not stop it."""

import os
import time

for _ in range(200):
    if os.fork() == 0:
        time.sleep(5)
        os._exit(0)
print("forked 200")
