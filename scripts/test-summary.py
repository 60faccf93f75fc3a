#!/usr/bin/env python3
"""Print 'N passed, N failed[, N skipped]' from the xUnit files `swift test --xunit-output` wrote.

Exits 1 when no test ran at all, so a run that silently tested nothing cannot pass.
"""
import glob, os, sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
for path in glob.glob(os.path.join(sys.argv[1], "*.xml")):
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if passed + failed == 0 else 0)
