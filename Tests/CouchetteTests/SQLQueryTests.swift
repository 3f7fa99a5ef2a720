import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

/// SQL++ queries: each feature checked against the rows it must return, parameters that cannot inject SQL, syntax
/// errors with positions, value indexes visible in `explain()`, and live queries.
@Suite(.timeLimit(.minutes(5))) struct SQLQueryTests {
    /// Two lists and five tasks in collection `todo.tasks` (lists in `todo.lists`), plus the same lists in `_default`.
    static func fill(_ db: Database) throws {
        let lists = try db.createCollection(name: "lists", scope: "todo")
        let tasks = try db.createCollection(name: "tasks", scope: "todo")
        for (id, name, owner) in [("l1", "Groceries", "alice"), ("l2", "Chores", "bob")] {
            _ = try lists.putProperties(["type": "task-list", "name": name, "owner": owner], documentID: id)
            _ = try db.defaultCollection().putProperties(["type": "task-list", "name": name, "owner": owner], documentID: id)
        }
        let rows: [(String, String, String, Bool, Int, [String])] = [
            ("t1", "l1", "Milk", false, 2, ["dairy", "cold"]),
            ("t2", "l1", "Bread", true, 1, ["bakery"]),
            ("t3", "l1", "Cheese", false, 3, ["dairy"]),
            ("t4", "l2", "Vacuum", false, 1, []),
            ("t5", "l2", "Dishes", true, 5, ["kitchen", "daily"]),
        ]
        for (id, list, task, complete, priority, tags) in rows {
            _ = try tasks.putProperties(
                ["type": "task", "taskList": ["id": list], "task": task, "complete": complete, "priority": priority,
                 "tags": tags], documentID: id)
        }
        _ = try tasks.putProperties(["type": "note", "text": "no task, no priority"], documentID: "n1")
    }

    /// A filled database in a new folder (keep the folder alive while using it).
    static func openFilled() throws -> (TemporaryDirectory, Database) {
        let directory = TemporaryDirectory()
        let db = try directory.open("todo")
        try fill(db)
        return (directory, db)
    }

    /// The rows of a query as JSON dictionaries.
    static func rows(_ db: Database, _ text: String, _ parameters: Parameters? = nil) throws -> [[String: JSONValue]] {
        let query = try db.createQuery(text)
        query.parameters = parameters
        return try query.execute().map(\.json)
    }

    /// One column of a query's rows.
    static func column(_ db: Database, _ text: String, _ parameters: Parameters? = nil) throws -> [JSONValue?] {
        try db.createQuery(text).with(parameters).execute().map { result in
            result.columnNames.first.flatMap { result.json[$0] }
        }
    }

    @Test func selectWhereOrderLimit() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        #expect(try Self.column(db, "SELECT task FROM todo.tasks WHERE type = 'task' ORDER BY task")
            == ["Bread", "Cheese", "Dishes", "Milk", "Vacuum"])
        #expect(try Self.rows(db, "SELECT META().id AS id, t.task FROM todo.tasks AS t WHERE t.priority >= 3 ORDER BY t.priority DESC")
            == [["id": "t5", "task": "Dishes"], ["id": "t3", "task": "Cheese"]])
        #expect(try Self.column(db, "SELECT task FROM todo.tasks WHERE type = 'task' ORDER BY priority, task LIMIT 2 OFFSET 1")
            == ["Vacuum", "Milk"])
        // SELECT *: the whole document under the collection's (or alias's) name.
        let all = try Self.rows(db, "SELECT * FROM todo.lists WHERE owner = 'bob'")
        #expect(all.count == 1 && all[0]["lists"]?["name"] == "Chores")
        #expect(try Self.rows(db, "SELECT l.* FROM todo.lists l WHERE META(l).id = 'l1'")[0]["l"]?["owner"] == "alice")
        // The default collection by `_` and by the database's name; DISTINCT.
        #expect(try Self.column(db, "SELECT DISTINCT type FROM _") == ["task-list"])
        #expect(try Self.column(db, "SELECT COUNT(*) FROM todo") == [2])
    }

    @Test func operatorsAndPredicates() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        func ids(_ condition: String) throws -> [String] {
            try Self.column(db, "SELECT META().id FROM todo.tasks WHERE \(condition) ORDER BY META().id").map { $0?.stringValue ?? "?" }
        }
        #expect(try ids("complete = true") == ["t2", "t5"])
        #expect(try ids("complete == false AND priority != 1") == ["t1", "t3"])
        #expect(try ids("priority < 2 OR task = 'Milk'") == ["t1", "t2", "t4"])
        #expect(try ids("NOT (priority <> 1)") == ["t2", "t4"])
        #expect(try ids("priority IN [1, 5]") == ["t2", "t4", "t5"])
        #expect(try ids("priority NOT IN [1, 5]") == ["t1", "t3"])
        #expect(try ids("task LIKE 'M%'") == ["t1"])
        #expect(try ids("task LIKE '%e%'") == ["t2", "t3", "t5"])
        #expect(try ids("task LIKE 'm%'").isEmpty)  // case-sensitive
        #expect(try ids("task NOT LIKE '%e%' AND type = 'task'") == ["t1", "t4"])
        #expect(try ids("priority BETWEEN 2 AND 3") == ["t1", "t3"])
        #expect(try ids("priority NOT BETWEEN 2 AND 3") == ["t2", "t4", "t5"])
        #expect(try ids("priority IS MISSING") == ["n1"])
        #expect(try ids("priority IS NOT MISSING AND priority * 2 + 1 = 7") == ["t3"])
        #expect(try ids("text IS VALUED") == ["n1"])
        #expect(try ids("taskList.id = 'l2'") == ["t4", "t5"])
        #expect(try ids("tags[0] = 'dairy'") == ["t1", "t3"])
        #expect(try ids("priority % 2 = 1 AND priority / 2 > 1") == ["t3", "t5"])
        #expect(try ids("task || '!' = 'Milk!'") == ["t1"])
        #expect(try ids("ANY tag IN tags SATISFIES tag = 'dairy' END") == ["t1", "t3"])
        #expect(try ids("EVERY tag IN tags SATISFIES tag LIKE 'd%' END AND type = 'task'") == ["t3", "t4"])
        #expect(try ids("ANY AND EVERY tag IN tags SATISFIES tag LIKE 'd%' END") == ["t3"])
        #expect(try ids("CASE WHEN priority > 2 THEN 'high' ELSE 'low' END = 'high'") == ["t3", "t5"])
    }

    @Test func nullAndMissingAreTellApart() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        let tasks = try #require(try db.collection(name: "tasks", scope: "todo"))
        _ = try tasks.putProperties(["type": "odd", "priority": NSNull()], documentID: "z")
        #expect(try Self.column(db, "SELECT META().id FROM todo.tasks WHERE priority IS NULL") == ["z"])
        #expect(try Self.column(db, "SELECT META().id FROM todo.tasks WHERE priority IS MISSING") == ["n1"])
        #expect(try Self.column(db, "SELECT META().id FROM todo.tasks WHERE type = 'odd' AND priority IS NOT VALUED") == ["z"])
        // A missing column has no key; a null one is null.
        let rows = try Self.rows(db, "SELECT priority, text FROM todo.tasks WHERE META().id IN ['z', 'n1'] ORDER BY META().id")
        #expect(rows == [["text": "no task, no priority"], ["priority": .null]])
    }

    /// A selected property keeps its JSON type whether it is read from the document or (indexed) from a value index:
    /// Booleans are not 0 and 1, null is not missing, and a string that looks like JSON stays a string.
    @Test func selectedPropertiesKeepTheirJSONTypes() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let collection = try db.defaultCollection()
        let values: [(String, Any?)] = [
            ("a", true), ("b", false), ("c", 0), ("d", 1), ("e", 1.0), ("f", 2.5), ("g", NSNull()), ("h", nil),
            ("i", "text"), ("j", "{not json"), ("k", "[1]"), ("l", ["x": [1, 2]]), ("m", [true, "y"]), ("n", ""),
            ("o", 9_007_199_254_740_993), ("p", -7),
        ]
        for (id, value) in values {
            var properties: [String: Any] = ["type": "probe"]
            if let value { properties["v"] = value }
            _ = try collection.putProperties(properties, documentID: id)
        }
        let expected: [JSONValue?] = [
            true, false, 0, 1, 1.0, 2.5, .null, nil, "text", "{not json", "[1]", ["x": [1, 2]], [true, "y"], "",
            .int(9_007_199_254_740_993), -7,
        ]
        func selected() throws -> [JSONValue?] {
            try db.createQuery("SELECT v FROM _ WHERE type = 'probe' ORDER BY META().id").execute().map { $0.json["v"] }
        }
        #expect(try selected() == expected)
        try collection.createIndex(withName: "byValue", config: ValueIndexConfiguration(["v"]))
        let indexed = try db.createQuery("SELECT v FROM _ WHERE v IS VALUED OR v IS NOT VALUED ORDER BY META().id")
        #expect(try indexed.explain().contains("CASE WHEN"))
        #expect(try selected() == expected)
        #expect(try indexed.execute().map { $0.json["v"] } == expected)
    }

    /// Names in the default collection for the collation tests.
    static func openNames() throws -> (TemporaryDirectory, Database) {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        for (index, name) in ["b", "A", "a", "á", "B", "Zoë", "zoe", "hello world"].enumerated() {
            _ = try db.defaultCollection().putProperties(["name": name], documentID: "d\(index)")
        }
        return (directory, db)
    }

    @Test func collationsCompareAndSortStrings() throws {
        let (directory, db) = try Self.openNames()
        defer { try? db.close(); _ = directory }
        func names(_ clauses: String) throws -> [String] {
            try Self.column(db, "SELECT name FROM _ WHERE name != 'hello world' \(clauses)").map { $0?.stringValue ?? "?" }
        }
        #expect(try names("ORDER BY name") == ["A", "B", "Zoë", "a", "b", "zoe", "á"])
        #expect(try names("ORDER BY name COLLATE UNICODE") == ["a", "A", "á", "b", "B", "zoe", "Zoë"])
        #expect(try names("ORDER BY name COLLATE (UNICODE) DESC") == ["Zoë", "zoe", "B", "b", "á", "A", "a"])
        #expect(try names("AND name COLLATE (UNICODE NOCASE NODIAC) = 'ZOE' ORDER BY name") == ["Zoë", "zoe"])
        #expect(try names("AND (name = 'a') COLLATE (UNICODE NOCASE) ORDER BY name") == ["A", "a"])
        #expect(try names("AND name COLLATE NOCASE = 'b' ORDER BY name") == ["B", "b"])
        #expect(try names("AND name COLLATE (UNICODE NODIAC) IN ['a'] ORDER BY name") == ["a", "á"])
        #expect(try names("AND name COLLATE (UNICODE NOCASE) BETWEEN 'a' AND 'b' ORDER BY name COLLATE UNICODE")
            == ["a", "A", "á", "b", "B"])
        #expect(try names("AND name = 'ZOE'").isEmpty)
        let error = #expect(throws: CouchetteError.self) { try db.createQuery("SELECT name FROM _ ORDER BY name COLLATE FRENCH") }
        #expect(error?.message.contains("expected a collation") == true)
    }

    @Test func regularExpressionFunctions() throws {
        let (directory, db) = try Self.openNames()
        defer { try? db.close(); _ = directory }
        func names(_ condition: String) throws -> [String] {
            try Self.column(db, "SELECT name FROM _ WHERE \(condition) ORDER BY name").map { $0?.stringValue ?? "?" }
        }
        #expect(try names("REGEXP_CONTAINS(name, '^[aá]')") == ["a", "á"])
        #expect(try names("REGEXP_CONTAINS(name, 'o')") == ["Zoë", "hello world", "zoe"])
        #expect(try names("REGEXP_LIKE(name, '[Zz]o.')") == ["Zoë", "zoe"])
        #expect(try names("REGEXP_LIKE(name, 'o')").isEmpty)  // the whole string must match
        let row = try #require(try Self.rows(db, """
            SELECT REGEXP_POSITION(name, 'wor') AS at, REGEXP_POSITION(name, 'xyz') AS nowhere,
            REGEXP_REPLACE(name, 'o', '0') AS all, REGEXP_REPLACE(name, 'o', '$0', 1) AS first
            FROM _ WHERE name = 'hello world'
            """).first)
        #expect(row == ["at": 6, "nowhere": -1, "all": "hell0 w0rld", "first": "hell$0 world"])
        let error = #expect(throws: CouchetteError.self) { try db.createQuery("SELECT name FROM _ WHERE REGEXP_LIKE(name, '(')").execute() }
        #expect(error?.status == 400)
    }

    @Test func positionsCollatedValuesAndPatternEdgeCases() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        // ORDER BY / GROUP BY a position is that result column, whatever SQL columns the query reads.
        #expect(try Self.column(db, "SELECT task, priority FROM todo.tasks WHERE type = 'task' ORDER BY 2 DESC, 1")
            == ["Dishes", "Cheese", "Milk", "Bread", "Vacuum"])
        #expect(try Self.rows(db, "SELECT complete, COUNT(*) AS n FROM todo.tasks WHERE type = 'task' GROUP BY 1 ORDER BY 1")
            == [["complete": false, "n": 3], ["complete": true, "n": 2]])
        #expect(try Self.column(db, "SELECT task FROM todo.tasks WHERE type = 'task' ORDER BY 7, task LIMIT 1") == ["Bread"])
        // A collated value keeps its type, and MISSING stays missing.
        let tags = try Self.rows(db, "SELECT tags COLLATE NOCASE AS tags FROM todo.tasks WHERE META().id IN ['t1', 'n1'] ORDER BY META().id")
        #expect(tags == [[:], ["tags": ["dairy", "cold"]]])
        #expect(try Self.column(db, "SELECT META().id FROM todo.tasks WHERE task COLLATE NOCASE IS MISSING") == ["n1"])
        // Whole-string matches whatever match the engine finds first; positions count code points.
        let row = try #require(try Self.rows(db, """
            SELECT REGEXP_LIKE('ab', 'a|ab') AS alternative, REGEXP_LIKE('aaa', 'a+?') AS lazy,
            REGEXP_POSITION('🇫🇷x', 'x') AS position, SUBSTR('🇫🇷x', REGEXP_POSITION('🇫🇷x', 'x')) AS rest,
            TRUNC(0.29, 2) AS truncated, TRUNC(-1.239, 2) AS negative, tags[-1] AS last
            FROM todo.tasks WHERE META().id = 't1'
            """).first)
        #expect(row == ["alternative": true, "lazy": true, "position": 2, "rest": "x", "truncated": 0.29, "negative": -1.23,
                        "last": "cold"])
        // Quoted aliases with .*, negative indexes in conditions.
        #expect(try Self.rows(db, "SELECT `my list`.* FROM todo.lists AS `my list` WHERE META(`my list`).id = 'l2'")
            .first?["my list"]?["name"] == "Chores")
        #expect(try Self.column(db, "SELECT META().id FROM todo.tasks WHERE tags[-1] = 'dairy'") == ["t3"])
    }

    @Test func joinsGroupingAndAggregates() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        #expect(try Self.rows(db, """
            SELECT l.name, COUNT(*) AS n FROM todo.tasks t JOIN todo.lists l ON META(l).id = t.taskList.id
            WHERE t.complete = false GROUP BY l.name ORDER BY l.name
            """) == [["name": "Chores", "n": 1], ["name": "Groceries", "n": 2]])
        #expect(try Self.rows(db, """
            SELECT t.taskList.id AS list, SUM(t.priority) AS total, AVG(t.priority) AS average, MIN(t.priority) AS low,
            MAX(t.task) AS last FROM todo.tasks t WHERE t.type = 'task' GROUP BY t.taskList.id HAVING COUNT(*) > 2
            """) == [["list": "l1", "total": 6, "average": 2.0, "low": 1, "last": "Milk"]])
        // LEFT OUTER JOIN keeps rows without a match.
        let lists = try #require(try db.collection(name: "lists", scope: "todo"))
        _ = try lists.putProperties(["type": "task-list", "name": "Empty"], documentID: "l3")
        #expect(try Self.rows(db, """
            SELECT l.name, COUNT(t.task) AS n FROM todo.lists l LEFT OUTER JOIN todo.tasks t ON t.taskList.id = META(l).id
            GROUP BY l.name ORDER BY l.name
            """) == [["name": "Chores", "n": 2], ["name": "Empty", "n": 0], ["name": "Groceries", "n": 3]])
    }

    @Test func functionsAndMeta() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        let row = try #require(try Self.rows(db, """
            SELECT LOWER(task) AS lower, UPPER(task) AS upper, LENGTH(task) AS length, CONTAINS(task, 'il') AS has,
            ABS(-priority) AS abs, ROUND(priority / 3.0, 2) AS rounded, POWER(priority, 2) AS squared, SQRT(4) AS root,
            ARRAY_LENGTH(tags) AS tagCount, ARRAY_CONTAINS(tags, 'cold') AS cold, ISARRAY(tags) AS isArray,
            ISSTRING(task) AS isString, TYPE(priority) AS type, SUBSTR(task, 1, 2) AS part, TRIM('  x ') AS trimmed,
            META().sequence > 0 AS sequenced, META().revisionID AS rev, META().deleted AS deleted
            FROM todo.tasks WHERE META().id = 't1'
            """).first)
        #expect(row["lower"] == "milk" && row["upper"] == "MILK" && row["length"] == 4 && row["has"] == true)
        #expect(row["abs"] == 2 && row["rounded"] == 0.67 && row["squared"] == 4.0 && row["root"] == 2.0)
        #expect(row["tagCount"] == 2 && row["cold"] == true && row["isArray"] == true && row["isString"] == true)
        #expect(row["type"] == "number" && row["part"] == "il" && row["trimmed"] == "x")
        #expect(row["sequenced"] == true && row["rev"]?.stringValue?.hasPrefix("1-") == true && row["deleted"] == false)
        #expect(try Self.column(db, "SELECT MILLIS_TO_STR(STR_TO_MILLIS('2026-11-23T10:00:00Z')) FROM _ LIMIT 1")
            == ["2026-11-23T10:00:00.000Z"])
        // Unnamed columns are $1, $2…; literals and arrays come back as JSON.
        let unnamed = try db.createQuery("SELECT 1 + 1, [1, 'a'], {\"k\": true} FROM _ LIMIT 1").execute().allResults()[0]
        #expect(unnamed.columnNames == ["$1", "$2", "$3"])
        #expect(unnamed.int(at: 0) == 2 && unnamed.array(at: 1)?.count == 2 && unnamed.dictionary(at: 2)?.boolean(forKey: "k") == true)
        // Deleted documents appear when META().deleted is asked for.
        let tasks = try #require(try db.collection(name: "tasks", scope: "todo"))
        try tasks.document(id: "t4").map { try tasks.delete(document: $0) }
        #expect(try Self.column(db, "SELECT META().id FROM todo.tasks WHERE META().deleted = true") == ["t4"])
        #expect(try Self.column(db, "SELECT COUNT(*) FROM todo.tasks") == [5])
    }

    @Test func parametersAreBoundNeverSpliced() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        let query = try db.createQuery("SELECT META().id FROM todo.tasks WHERE task = $task OR priority IN $levels ORDER BY META().id")
        query.parameters = Parameters().setString("Milk", forName: "task").setArray([5], forName: "levels")
        #expect(try query.execute().map { $0.string(at: 0) ?? "" } == ["t1", "t5"])
        // Injection attempts match nothing and change nothing.
        for attempt in ["' OR '1'='1", "Milk'; DROP TABLE documents; --", "x\" OR 1=1 --", "%"] {
            query.parameters = Parameters().setString(attempt, forName: "task").setArray([], forName: "levels")
            #expect(try query.execute().allResults().isEmpty, "\(attempt)")
        }
        #expect(try Self.column(db, "SELECT COUNT(*) FROM todo.tasks") == [6])
        // A missing parameter is null: it matches nothing.
        query.parameters = nil
        #expect(try query.execute().allResults().isEmpty)
        // Containers and blobs as parameters.
        let values = try db.createQuery("SELECT $list AS list, $object AS object, $blob AS blob FROM _ LIMIT 1")
        let blob = Blob(contentType: "text/plain", data: Data("hello".utf8))
        values.parameters = Parameters().setArray(MutableArrayObject(data: [1, "two"]), forName: "list")
            .setDictionary(MutableDictionaryObject(data: ["k": true]), forName: "object").setBlob(blob, forName: "blob")
        let row = try #require(try values.execute().allResults().first)
        #expect(row.json["list"] == [1, "two"] && row.json["object"] == ["k": true])
        #expect(row.json["blob"]?["digest"]?.stringValue == blob.digest && row.json["blob"]?["length"] == 5)
        let limited = try db.createQuery("SELECT task FROM todo.tasks WHERE type = $type ORDER BY task LIMIT $n")
        limited.parameters = Parameters().setString("task", forName: "type").setInt(2, forName: "n")
        #expect(try limited.execute().map { $0.string(forKey: "task") ?? "" } == ["Bread", "Cheese"])
    }

    @Test(arguments: [
        ("SELEC task FROM _", 0, "SELECT"),
        ("SELECT FROM _", 7, "an expression"),
        ("SELECT task FROM _ WHERE", 24, "an expression"),
        ("SELECT task FROM _ WHERE priority >", 35, "an expression"),
        ("SELECT task FROM _ ORDER task", 25, "BY"),
        ("SELECT task FROM _ WHERE name = 'open", 32, "a closing '"),
        ("SELECT task FROM _ WHERE ANY x IN tags x = 1 END", 39, "SATISFIES"),
        ("SELECT (task FROM _", 13, "')'"),
        ("SELECT task FROM _ LIMIT 1 extra", 27, "the end of the query"),
    ])
    func syntaxErrorsNameThePositionAndWhatWasExpected(text: String, position: Int, expected: String) throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let error = #expect(throws: CouchetteError.self) { try db.createQuery(text) }
        #expect(error?.status == 400)
        #expect(error?.message.contains("position \(position)") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("expected \(expected)") == true, "\(error?.message ?? "")")
    }

    @Test func semanticErrorsAreClear() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        var error = #expect(throws: CouchetteError.self) { try db.createQuery("SELECT x FROM nowhere").execute() }
        #expect(error?.code == .notFound)
        error = #expect(throws: CouchetteError.self) { try db.createQuery("SELECT NOPE(x) FROM _").execute() }
        #expect(error?.code == .badInput)
        error = #expect(throws: CouchetteError.self) { try db.createQuery("SELECT META().colour FROM _").execute() }
        #expect(error?.code == .badInput)
        error = #expect(throws: CouchetteError.self) { try db.createQuery("SELECT task").execute() }
        #expect(error?.code == .badInput)
    }

    @Test func valueIndexesShowInExplain() throws {
        let (directory, db) = try Self.openFilled()
        defer { try? db.close(); _ = directory }
        let tasks = try #require(try db.collection(name: "tasks", scope: "todo"))
        let query = try db.createQuery("SELECT task FROM todo.tasks WHERE taskList.id = 'l1' AND complete = false")
        #expect(!(try query.explain().contains("byList")))
        try tasks.createIndex(withName: "byList", config: ValueIndexConfiguration(["taskList.id", "complete"]))
        try tasks.createIndex(withName: "byList", config: ValueIndexConfiguration(["taskList.id", "complete"]))  // no-op
        #expect(try tasks.indexes() == ["byList"])
        let handle = try #require(try tasks.index(withName: "byList"))
        #expect(handle.name == "byList" && handle.collection.fullName == "todo.tasks")
        #expect(try tasks.index(withName: "nothing") == nil)
        let plan = try db.createQuery("SELECT task FROM todo.tasks WHERE taskList.id = 'l1' AND complete = false").explain()
        #expect(plan.contains("USING INDEX ix_"), "\(plan)")
        #expect(plan.contains("byList"))
        #expect(try db.createQuery("SELECT task FROM todo.tasks WHERE taskList.id = 'l1' AND complete = false ORDER BY task")
            .execute().map { $0.string(forKey: "task") ?? "" } == ["Cheese", "Milk"])
        try tasks.deleteIndex(forName: "byList")
        #expect(try tasks.indexes().isEmpty)
        #expect(try tasks.index(withName: "byList") == nil)
        #expect(throws: CouchetteError.self) { try tasks.createIndex(withName: "bad", config: ValueIndexConfiguration(["a +"])) }
    }

    @Test func liveQueriesReportNewResultsAfterCommits() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("todo")
        try Self.fill(db)
        let tasks = try #require(try db.collection(name: "tasks", scope: "todo"))
        let query = try db.createQuery("SELECT COUNT(*) AS n FROM todo.tasks WHERE complete = false")
        let (inbox, task) = liveCounts(query)
        #expect(await next(inbox.stream) == 3)
        _ = try tasks.putProperties(["type": "task", "task": "New", "complete": false], documentID: "t6")
        #expect(await next(inbox.stream) == 4)
        // A change elsewhere (another collection) or one that leaves the count alone reports nothing; the next does.
        _ = try db.defaultCollection().putProperties(["x": 1], documentID: "other")
        _ = try tasks.putProperties(["type": "note"], documentID: "n2")
        _ = try tasks.putProperties(["type": "task", "task": "Newer", "complete": false], documentID: "t7")
        #expect(await next(inbox.stream) == 5)
        try db.close()
        #expect(await next(inbox.stream) == .some(nil))
        try await task.value
    }
}

extension Query {
    func with(_ parameters: Parameters?) -> Query {
        self.parameters = parameters
        return self
    }
}
