"""A program that never imports threading (run with -S: site imports nothing either), for the
check that its one thread is still called MainThread (tests/integration/test_live.py). It prints
whether threading is loaded, then sleeps.

    python -S unthreaded.py"""
import sys
import time

sys.stdout.write("%r\n" % ("threading" in sys.modules))
sys.stdout.flush()
time.sleep(600)  # UNTHREADED-SLEEPS
