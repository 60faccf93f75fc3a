# partyradio — shortcuts; the README's two commands are scripts/partyradio and scripts/test.
.PHONY: build release deb test unit sim bench bench-live fuzz order-file clean testbed-clean

build:
	swift build

release:
	swift build -c release --static-swift-stdlib --product partyradio

# The Debian package, .build/deb/partyradio_<version>_<arch>.deb (see the README's Install).
deb:
	scripts/package

test:
	scripts/test

unit:
	swift test --skip IntegrationTests

# The simulated LAN over 2,000 seeds (the test command runs 200).
sim:
	PARTYRADIO_SIM_SEEDS=2000 swift test --filter PartyRadioSimulationTests

bench:
	scripts/bench

# Live stations against Snapcast 0.26 on the namespace LAN (needs root; docs/BENCHMARKS.md, "Live").
bench-live:
	scripts/bench live

# Every network parser under libFuzzer with the address sanitizer, 2 minutes each.
fuzz:
	scripts/fuzz 120

# Records again which functions the commands run, for the release link's order (needs root and
# valgrind; see docs/BINARY.md, "Code laid out by use").
order-file:
	python3 scripts/order-file.py

clean:
	swift package clean

testbed-clean:
	scripts/testbed.sh down-all
