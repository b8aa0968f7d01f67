// libFuzzer target: `flags import`. Any bytes are imported as each system's file
// (GrowthBook, LaunchDarkly, flagd, Unleash): an import is refused with a message, or gives
// a file that loads (the importer checks it, and says so otherwise: a finding) and is the
// same when made again; every note names a place.
import Foundation

/// One input, 0 when it is done with it (a finding traps); called by `FuzzMain.swift`.
func importFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for format in ImportFormat.allCases {
        do throws(ImportError) {
            let result = try FlagsImport.run(bytes, from: format, name: "fuzz.json")
            let again = try FlagsImport.run(bytes, from: format, name: "fuzz.json")
            precondition(again.text == result.text && again.notes == result.notes, "\(format): a second import differs")
            precondition(result.notes.allSatisfy { !$0.place.isEmpty && !$0.message.isEmpty }, "\(format): a note names no place")
        } catch {
            precondition(!error.message.contains("does not load"), "\(format): \(error.message)")
            precondition(!error.message.isEmpty, "\(format): an error without a message")
        }
    }
    return 0
}
