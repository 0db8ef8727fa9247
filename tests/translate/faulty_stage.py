"""A pipeline stage for tests: passes NUL-terminated records through, dies on "BOOM", hangs on "HANG".

Put in front of a real Apertium pipeline (``python faulty_stage.py | <pipeline>``) to give the translator a
sentence that crashes, or hangs, the engine every time it is sent.
"""

import os
import sys
import time

stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
record = bytearray()
while byte := stdin.read(1):
    record += byte
    if byte != b"\0":
        continue
    if b"BOOM" in record:
        os._exit(3)
    if b"HANG" in record:
        time.sleep(3600)
    stdout.write(record)
    stdout.flush()
    record.clear()
