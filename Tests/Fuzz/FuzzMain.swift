// libFuzzer's entry point for the six targets, built as one binary (Tests/Fuzz/run.sh):
// FLAGRULES_FUZZ_TARGET names the target an input goes to (pipeline, pattern, context, code,
// import or http).
import Foundation

/// The target this process fuzzes, read once from the environment.
let fuzzTarget: @Sendable (UnsafePointer<UInt8>, Int) -> CInt = {
    switch ProcessInfo.processInfo.environment["FLAGRULES_FUZZ_TARGET"] {
    case "pipeline": return pipelineFuzzTest
    case "pattern": return patternFuzzTest
    case "context": return contextFuzzTest
    case "code": return codeFuzzTest
    case "import": return importFuzzTest
    case "http": return httpFuzzTest
    case let other:
        fatalError(
            "FLAGRULES_FUZZ_TARGET is \(other.map { "'\($0)'" } ?? "not set"): set it to pipeline, pattern, context, code, import or http")
    }
}()

/// libFuzzer's entry point: one input, 0 when it is done with it (a finding traps).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzTarget(data, size)
}
