"""A module whose import never ends, for fork_import_lock.py: its body tells the importer's
process that it has begun (importing.set()), then sleeps."""
import time

import __main__

__main__.importing.set()
while True:
    time.sleep(3600)
