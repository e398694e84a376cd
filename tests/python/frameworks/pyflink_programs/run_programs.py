"""Runs PyFlink programs one after the other in this process (each as ``__main__``), then
exits with the status given first: ``run_programs.py STATUS program.py...``. One
process per transport keeps tests/python/frameworks/test_pyflink.py to one JVM start each."""
import os
import runpy
import sys

if __name__ == "__main__":
    for path in sys.argv[2:]:
        print("==", os.path.basename(path), flush=True)
        runpy.run_path(path, run_name="__main__")
        sys.stdout.flush()
    sys.exit(int(sys.argv[1]))
