import Couchette
import CouchetteTestSupport
import Foundation
import Testing

/// A child process saves documents in a loop and is killed with SIGKILL; every save that returned must be
/// there when the database is reopened, and the integrity check must pass.
@Suite(.timeLimit(.minutes(5))) struct CrashTests {
    /// The `couchette` tool, built next to the test bundle (`make test` builds every product first).
    private func toolURL() throws -> URL { try ChildProcess.builtProduct("couchette") }

    /// Plain saves one at a time, and encrypted ones in batches of 300 (whose WAL frames are gathered and written at
    /// each commit, `cipher_wal.c`).
    @Test(arguments: [(nil, 1), ("crash password", 300)] as [(String?, Int)])
    func savesThatReturnedSurviveSIGKILL(password: String?, batch: Int) async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let directory = TemporaryDirectory()
            var arguments = ["stress-save", "--directory", directory.path, "--name", "crash", "--batch", "\(batch)"]
            if let password { arguments += ["--password", password] }
            let child = try ChildProcess(try toolURL(), arguments)
            defer { child.kill() }

            // Read until enough saves have returned, then kill the writer mid-loop.
            try child.waitForOutput(within: .seconds(120)) { $0.utf8.count { $0 == 0x0A } >= 1_000 + batch }
            child.kill()
            #expect(child.wasKilledBySignal)

            let saved = child.output.split(separator: "\n")
                .filter { $0.hasPrefix("saved ") }.map { String($0.dropFirst(6)) }
            #expect(saved.count >= 1_000)

            let db = try directory.open("crash") { $0.encryptionKey = password.map(EncryptionKey.password) }
            defer { try? db.close() }
            let collection = try db.defaultCollection()
            var missing: [String] = []
            for id in saved where try collection.document(id: id) == nil { missing.append(id) }
            #expect(missing.isEmpty, "missing after the crash: \(missing.prefix(10))")
            try db.performMaintenance(type: .integrityCheck)
            // The database is still writable after recovery.
            try collection.save(document: MutableDocument(id: "after-crash"))
            #expect(try collection.document(id: "after-crash") != nil)
        }
    }

    /// A child process changes the key of an encrypted database back and forth and is killed at random moments;
    /// each time the database opens with exactly one of the two passwords and holds every document.
    @Test func aKeyChangeKilledAnywhereLeavesOneWorkingKeyAndAllData() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let directory = try Self.seedEncrypted(documents: 2_000)

            var current = "alpha"
            var kills = 0
            for round in 0..<12 {
                let other = current == "alpha" ? "beta" : "alpha"
                let child = try ChildProcess(
                    try toolURL(), ["stress-rekey", "--directory", directory.path, "--from", current, "--to", other])
                // Let it finish a few changes (more each round), then kill it wherever it is.
                try child.waitForOutput(within: .seconds(120)) { $0.utf8.count { $0 == 0x0A } >= 1 + round % 3 }
                child.kill()
                if child.wasKilledBySignal { kills += 1 }

                let opened = try Self.passwordsThatOpen(directory, documents: 2_000)
                #expect(opened.count == 1, "round \(round): opened with \(opened)")
                current = opened.first ?? current
            }
            #expect(kills == 12)
        }
    }

    /// The steps a key change reports (`Database.observeKeyChangeSteps`), and whether the change is committed once
    /// each is reached.
    static let keyChangeSteps: [(step: String, committed: Bool)] = [
        ("database-copied", false), ("blobs-copied", false), ("closed", false), ("committed", true),
        ("database-moved", true), ("blobs-moved-aside", true), ("blobs-moved", true),
    ]

    /// A key change ended after each of its steps: the database opens with the old key before the commit and the new
    /// one after it, never both, with every document and blob, and nothing of the change is left in the folder.
    @Test(arguments: keyChangeSteps.map(\.step))
    func aKeyChangeEndedAfterAnyStepOpensWithExactlyOneKey(step: String) async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let directory = try Self.seedEncrypted(documents: 200)

            let child = try ChildProcess(
                try toolURL(),
                ["stress-rekey", "--directory", directory.path, "--from", "alpha", "--to", "beta", "--exit-at", step])
            #expect(try child.waitForExit(within: .seconds(120)) == 0, "\(child.output)")

            let committed = Self.keyChangeSteps.first { $0.step == step }!.committed
            #expect(try Self.passwordsThatOpen(directory, documents: 200) == [committed ? "beta" : "alpha"])
            let folder = (directory.path as NSString).appendingPathComponent("crash.couchette")
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == ["db.sqlite3", "Attachments"])
        }
    }

    // MARK: - Encrypted databases

    /// A folder with the database `crash`, encrypted with the password "alpha", holding `documents` documents and the
    /// blobs.
    static func seedEncrypted(documents: Int) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        var config = directory.configuration
        config.encryptionKey = .password("alpha")
        let seeded = try Database(name: "crash", config: config)
        try EncryptionTests.fill(seeded, count: documents)
        try addBlobs(to: seeded)
        try seeded.close()
        return directory
    }

    /// Which of "alpha" and "beta" open the database `crash`; each that does must show every document and blob and
    /// pass the integrity check, each that does not must fail as a wrong key.
    static func passwordsThatOpen(_ directory: TemporaryDirectory, documents: Int) throws -> [String] {
        var opened: [String] = []
        for password in ["alpha", "beta"] {
            var attempt = directory.configuration
            attempt.encryptionKey = .password(password)
            do {
                let db = try Database(name: "crash", config: attempt)
                #expect(try db.defaultCollection().count == UInt64(documents + blobCount))
                try expectBlobs(in: db)
                try db.performMaintenance(type: .integrityCheck)
                try db.close()
                opened.append(password)
            } catch let error as CouchetteError {
                #expect(error.code == .wrongEncryptionKey, "\(password): \(error)")
            }
        }
        return opened
    }

    // MARK: - Blobs

    static let blobCount = 6

    /// The content of blob `index`: sizes from 100 bytes to a few chunks.
    static func blobContent(_ index: Int) -> Data {
        EncryptedBlobTests.content(size: 100 + index * 45_000, seed: UInt8(index))
    }

    static func addBlobs(to db: Database) throws {
        for index in 0..<blobCount {
            let blob = Blob(contentType: "application/octet-stream", data: blobContent(index))
            try db.defaultCollection().save(document: MutableDocument(id: "blob\(index)").setBlob(blob, forKey: "file"))
        }
    }

    static func expectBlobs(in db: Database) throws {
        for index in 0..<blobCount {
            #expect(try db.defaultCollection().document(id: "blob\(index)")?.blob(forKey: "file")?.content == blobContent(index))
        }
    }
}
