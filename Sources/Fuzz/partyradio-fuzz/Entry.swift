import Glibc

#if FUZZING
    /// libFuzzer's entry points (built with `-sanitize=fuzzer`; `scripts/fuzz` does it). The target
    /// comes from `PARTYRADIO_FUZZ_TARGET`. SwiftPM names an executable's entry point after its
    /// module, so that one starts libFuzzer's driver; libFuzzer's own `main` works as well.
    @_silgen_name("LLVMFuzzerRunDriver")
    func runDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    nonisolated(unsafe) private var target: Harness?

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        if target == nil {
            let name = getenv("PARTYRADIO_FUZZ_TARGET").map { String(cString: $0) } ?? ""
            guard let chosen = Harness(rawValue: name) else {
                fatalError("PARTYRADIO_FUZZ_TARGET must be one of \(Harness.allCases.map(\.rawValue))")
            }
            target = chosen
        }
        target?.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }

    @_cdecl("partyradio_fuzz_main")
    public func fuzzMain(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> CInt {
        var count = argc
        var arguments = argv
        return runDriver(&count, &arguments, fuzzOne)
    }
#else
    /// Without libFuzzer: replays inputs (a corpus, a crash libFuzzer saved) through one target,
    /// `partyradio-fuzz TARGET FILE...`, so a finding reproduces in an ordinary build.
    @main
    struct Replay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = Harness(rawValue: name) else {
                print("usage: partyradio-fuzz \(Harness.allCases.map(\.rawValue).joined(separator: "|")) FILE...")
                exit(2)
            }
            var count = 0
            for path in arguments.dropFirst() {
                guard let file = fopen(path, "rb") else {
                    print("partyradio-fuzz: cannot read \(path)")
                    exit(1)
                }
                var bytes: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let read = fread(&buffer, 1, buffer.count, file)
                    if read <= 0 { break }
                    bytes += buffer[0..<read]
                }
                fclose(file)
                target.run(bytes)
                count += 1
            }
            print("partyradio-fuzz: \(count) inputs through \(name), no findings")
        }
    }
#endif
