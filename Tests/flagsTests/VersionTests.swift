import Foundation
import XCTest

/// One version everywhere a user reads one: `flags --version` and the README's dependency
/// line. (An XCTest case, so that the XCTest part of `swift test` runs a test of its own
/// and says so.)
final class VersionTests: XCTestCase {
    func testTheReadmeNamesTheVersionTheCommandReports() throws {
        let run = try flags(["--version"])
        XCTAssertEqual(run.status, 0)
        let version = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").last.map(String.init) ?? ""
        XCTAssertTrue(version.split(separator: ".").count == 3, "flags --version printed '\(run.stdout)'")
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let dependency = readme.split(separator: "\n").first { $0.contains(".package(url:") && $0.contains("from:") }
        XCTAssertNotNil(dependency, "the README shows no versioned dependency line")
        XCTAssertTrue(dependency?.contains("from: \"\(version)\"") == true, "README: \(dependency ?? "") ; flags --version: \(version)")
    }
}
