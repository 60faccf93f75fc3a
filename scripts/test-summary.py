#!/usr/bin/env python3
"""Print 'N passed, N failed[, N skipped]' from the xUnit files `swift test --xunit-output` wrote.

Before it, the ten slowest tests, so a run's log shows where the suite's time goes.
Exits 1 when no test ran at all, so a run that silently tested nothing cannot pass.
"""
import glob, os, sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
timed = []
for path in glob.glob(os.path.join(sys.argv[1], "*.xml")):
    for case in ET.parse(path).getroot().iter("testcase"):
        try:
            timed.append((float(case.get("time", "0")), f"{case.get('classname', '')}.{case.get('name', '')}"))
        except ValueError:
            pass
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
if timed:
    timed.sort(reverse=True)
    total = sum(seconds for seconds, _ in timed)
    print(f"slowest tests (of {total:.0f} s in all):")
    for seconds, name in timed[:10]:
        print(f"  {seconds:7.1f} s  {name}")
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if passed + failed == 0 else 0)
