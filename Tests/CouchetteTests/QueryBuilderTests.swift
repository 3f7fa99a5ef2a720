import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

/// The query builder (Couchbase Lite 3's `QueryBuilder`): every clause, operator and function gives the rows of the
/// SQL++ query it stands for, and its `description` is SQL++ text that runs to the same rows.
@Suite(.timeLimit(.minutes(5))) struct QueryBuilderTests {
    private typealias Rows = [[String: JSONValue]]

    /// The builder query's rows, after checking that its SQL++ description and the hand-written `sql` give the same.
    private static func rows(_ db: Database, _ query: Query, sameAs sql: String? = nil) throws -> Rows {
        let built = try query.execute().map(\.json)
        let described = try db.createQuery(query.description).with(query.parameters).execute().map(\.json)
        #expect(built == described, "\(query.description)")
        if let sql {
            #expect(built == (try db.createQuery(sql).with(query.parameters).execute().map(\.json)), "\(sql)")
        }
        return built
    }

    /// The first column of each row.
    private static func column(_ db: Database, _ query: Query, sameAs sql: String? = nil) throws -> [JSONValue?] {
        let names = try query.execute().columnNames
        return try rows(db, query, sameAs: sql).map { row in names.first.flatMap { row[$0] } }
    }

    private static func collections(_ db: Database) throws -> (tasks: Collection, lists: Collection) {
        (try #require(try db.collection(name: "tasks", scope: "todo")), try #require(try db.collection(name: "lists", scope: "todo")))
    }

    @Test func selectFromWhereOrderLimit() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, lists) = try Self.collections(db)
        let names = QueryBuilder.select(SelectResult.property("task"))
            .from(DataSource.collection(tasks))
            .where(Expression.property("type").equalTo(Expression.string("task")))
            .orderBy(Ordering.property("task"))
        #expect(try Self.column(db, names, sameAs: "SELECT task FROM todo.tasks WHERE type = 'task' ORDER BY task")
            == ["Bread", "Cheese", "Dishes", "Milk", "Vacuum"])
        #expect(names.description == "SELECT task FROM todo.tasks WHERE (type = 'task') ORDER BY task ASC")

        let aliased = QueryBuilder.select(SelectResult.expression(Meta.id).as("id"), SelectResult.property("task").as("t"))
            .from(DataSource.collection(tasks).as("t"))
            .where(Expression.property("priority").from("t").greaterThanOrEqualTo(Expression.int(3)))
            .orderBy(Ordering.expression(Expression.property("priority").from("t")).descending())
        #expect(try Self.rows(db, aliased) == [["id": "t5", "t": "Dishes"], ["id": "t3", "t": "Cheese"]])

        // A nil alias changes nothing.
        let noAlias: String? = nil
        #expect(try Self.column(db, QueryBuilder.select(SelectResult.property("task").as(noAlias))
            .from(DataSource.collection(tasks)).where(Expression.property("priority").from(noAlias).equalTo(Expression.int(5))))
            == ["Dishes"])

        let paged = QueryBuilder.select(SelectResult.property("task")).from(DataSource.collection(tasks))
            .where(Expression.property("type").equalTo(Expression.string("task")))
            .orderBy(Ordering.property("priority").ascending(), Ordering.property("task"))
            .limit(Expression.int(2), offset: Expression.int(1))
        #expect(try Self.column(db, paged) == ["Vacuum", "Milk"])
        #expect(try Self.column(db, QueryBuilder.select(SelectResult.property("task")).from(DataSource.collection(tasks))
            .orderBy(Ordering.property("task").descending()).limit(Expression.int(1))) == ["Vacuum"])

        // SelectResult.all(): each source's document under its alias.
        let all = try Self.rows(db, QueryBuilder.select(SelectResult.all()).from(DataSource.collection(lists))
            .where(Expression.property("owner").equalTo(Expression.string("bob"))))
        #expect(all.count == 1 && all[0]["lists"]?["name"] == "Chores")
        let one = try Self.rows(db, QueryBuilder.select(SelectResult.all().from("l")).from(DataSource.collection(lists).as("l"))
            .where(Meta.id.from("l").equalTo(Expression.string("l1"))))
        #expect(one[0]["l"]?["owner"] == "alice")
        // The default collection through DataSource.database; DISTINCT; COUNT(*).
        #expect(try Self.column(db, QueryBuilder.selectDistinct(SelectResult.property("type")).from(DataSource.database(db)),
            sameAs: "SELECT DISTINCT type FROM _") == ["task-list"])
        #expect(try Self.column(db, QueryBuilder.select(SelectResult.expression(Function.count(Expression.all())))
            .from(DataSource.database(db))) == [2])
    }

    @Test func operatorsAndPredicates() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, _) = try Self.collections(db)
        func ids(_ condition: any ExpressionProtocol, _ sql: String) throws -> [String] {
            let query = QueryBuilder.select(SelectResult.expression(Meta.id)).from(DataSource.collection(tasks))
                .where(condition).orderBy(Ordering.expression(Meta.id))
            return try Self.column(db, query, sameAs: "SELECT META().id FROM todo.tasks WHERE \(sql) ORDER BY META().id")
                .map { $0?.stringValue ?? "?" }
        }
        let priority = Expression.property("priority")
        let task = Expression.property("task")
        #expect(try ids(Expression.property("complete").equalTo(Expression.boolean(true)), "complete = true") == ["t2", "t5"])
        #expect(try ids(Expression.property("complete").equalTo(Expression.boolean(false)).and(priority.notEqualTo(Expression.int(1))),
            "complete = false AND priority != 1") == ["t1", "t3"])
        #expect(try ids(priority.lessThan(Expression.int(2)).or(task.equalTo(Expression.string("Milk"))),
            "priority < 2 OR task = 'Milk'") == ["t1", "t2", "t4"])
        #expect(try ids(Expression.not(priority.notEqualTo(Expression.int(1))), "NOT (priority != 1)") == ["t2", "t4"])
        #expect(try ids(priority.in([Expression.int(1), Expression.int(5)]), "priority IN [1, 5]") == ["t2", "t4", "t5"])
        #expect(try ids(task.like(Expression.string("%e%")), "task LIKE '%e%'") == ["t2", "t3", "t5"])
        #expect(try ids(priority.between(Expression.int(2), and: Expression.int(3)), "priority BETWEEN 2 AND 3") == ["t1", "t3"])
        #expect(try ids(priority.lessThanOrEqualTo(Expression.int(1)), "priority <= 1") == ["t2", "t4"])
        #expect(try ids(priority.greaterThan(Expression.int(3)), "priority > 3") == ["t5"])
        #expect(try ids(priority.isMissing(), "priority IS MISSING") == ["n1"])
        #expect(try ids(priority.isNotMissing().and(priority.multiply(Expression.int(2)).add(Expression.int(1)).equalTo(Expression.int(7))),
            "priority IS NOT MISSING AND priority * 2 + 1 = 7") == ["t3"])
        #expect(try ids(Expression.property("text").isValued(), "text IS VALUED") == ["n1"])
        #expect(try ids(Expression.property("taskList.id").equalTo(Expression.string("l2")), "taskList.id = 'l2'") == ["t4", "t5"])
        #expect(try ids(Expression.property("tags[0]").equalTo(Expression.string("dairy")), "tags[0] = 'dairy'") == ["t1", "t3"])
        #expect(try ids(priority.modulo(Expression.int(2)).equalTo(Expression.int(1)).and(priority.divide(Expression.int(2)).greaterThan(Expression.int(1))),
            "priority % 2 = 1 AND priority / 2 > 1") == ["t3", "t5"])
        #expect(try ids(priority.subtract(Expression.int(1)).equalTo(Expression.negated(Expression.int(0))), "priority - 1 = 0") == ["t2", "t4"])
        #expect(try ids(Expression.negated(priority).lessThan(Expression.int(-4)), "-priority < -4") == ["t5"])
        #expect(try ids(task.concat(Expression.string("!")).equalTo(Expression.string("Milk!")), "task || '!' = 'Milk!'") == ["t1"])
        #expect(try ids(Expression.not(Expression.property("text").is(Expression.value(nil))), "NOT (text IS NULL)") == ["n1"])
        #expect(try ids(Expression.property("type").isNot(Expression.string("task")), "type IS NOT 'task'") == ["n1"])
        #expect(try ids(priority.isNotValued(), "priority IS NOT VALUED") == ["n1"])
        #expect(try ids(priority.isNull(), "priority IS NULL").isEmpty)
        #expect(try ids(priority.isNotNull().and(priority.equalTo(Expression.int(5))), "priority IS NOT NULL AND priority = 5") == ["t5"])

        // ANY, EVERY, ANY AND EVERY.
        let tag = ArrayExpression.variable("tag")
        let tags = Expression.property("tags")
        #expect(try ids(ArrayExpression.any(tag).in(tags).satisfies(tag.equalTo(Expression.string("dairy"))),
            "ANY tag IN tags SATISFIES tag = 'dairy' END") == ["t1", "t3"])
        #expect(try ids(ArrayExpression.every(tag).in(tags).satisfies(tag.like(Expression.string("d%")))
            .and(Expression.property("type").equalTo(Expression.string("task"))),
            "EVERY tag IN tags SATISFIES tag LIKE 'd%' END AND type = 'task'") == ["t3", "t4"])
        #expect(try ids(ArrayExpression.anyAndEvery(tag).in(tags).satisfies(tag.like(Expression.string("d%"))),
            "ANY AND EVERY tag IN tags SATISFIES tag LIKE 'd%' END") == ["t3"])
    }

    @Test func literalsOfEveryType() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let date = Date(timeIntervalSince1970: 1_795_000_000)
        let query = QueryBuilder.select(
            SelectResult.expression(Expression.value(["a", 1, true] as [Any])).as("array"),
            SelectResult.expression(Expression.dictionary(["k": "v", "n": 2.5])).as("object"),
            SelectResult.expression(Expression.int64(9_007_199_254_740_993)).as("big"),
            SelectResult.expression(Expression.double(0.25)).as("double"),
            SelectResult.expression(Expression.float(1.5)).as("float"),
            SelectResult.expression(Expression.number(7)).as("number"),
            SelectResult.expression(Expression.string("it's")).as("quote"),
            SelectResult.expression(Expression.date(date)).as("date"),
            SelectResult.expression(Expression.value(nil)).as("null"),
            SelectResult.expression(Expression.array(nil)).as("nilArray")
        ).from(DataSource.database(db)).limit(Expression.int(1))
        let row = try #require(try Self.rows(db, query).first)
        #expect(row["array"] == ["a", 1, true] && row["object"] == ["k": "v", "n": 2.5])
        #expect(row["big"] == .int(9_007_199_254_740_993) && row["double"] == 0.25 && row["float"] == 1.5 && row["number"] == 7)
        #expect(row["quote"] == "it's" && row["null"] == .null && row["nilArray"] == .null)
        #expect(row["date"]?.stringValue?.hasPrefix("2026-11-18T11:06:40") == true, "\(row["date"] ?? .null)")
    }

    @Test func joinsGroupingAndAggregates() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, lists) = try Self.collections(db)
        let perList = QueryBuilder
            .select(SelectResult.expression(Expression.property("name").from("l")), SelectResult.expression(Function.count(Expression.all())).as("n"))
            .from(DataSource.collection(tasks).as("t"))
            .join(Join.join(DataSource.collection(lists).as("l"))
                .on(Meta.id.from("l").equalTo(Expression.property("taskList.id").from("t"))))
            .where(Expression.property("complete").from("t").equalTo(Expression.boolean(false)))
            .groupBy(Expression.property("name").from("l"))
            .orderBy(Ordering.expression(Expression.property("name").from("l")))
        #expect(try Self.rows(db, perList, sameAs: """
            SELECT l.name, COUNT(*) AS n FROM todo.tasks t JOIN todo.lists l ON META(l).id = t.taskList.id
            WHERE t.complete = false GROUP BY l.name ORDER BY l.name
            """) == [["name": "Chores", "n": 1], ["name": "Groceries", "n": 2]])

        let t = { (name: String) in Expression.property(name).from("t") }
        let totals = QueryBuilder.select(
            SelectResult.expression(t("taskList.id")).as("list"),
            SelectResult.expression(Function.sum(t("priority"))).as("total"),
            SelectResult.expression(Function.avg(t("priority"))).as("average"),
            SelectResult.expression(Function.min(t("priority"))).as("low"),
            SelectResult.expression(Function.max(t("task"))).as("last")
        ).from(DataSource.collection(tasks).as("t"))
            .where(t("type").equalTo(Expression.string("task")))
            .groupBy(t("taskList.id"))
            .having(Function.count(Expression.all()).greaterThan(Expression.int(2)))
        #expect(try Self.rows(db, totals) == [["list": "l1", "total": 6, "average": 2.0, "low": 1, "last": "Milk"]])

        _ = try lists.putProperties(["type": "task-list", "name": "Empty"], documentID: "l3")
        let outer = QueryBuilder
            .select(SelectResult.expression(Expression.property("name").from("l")), SelectResult.expression(Function.count(t("task"))).as("n"))
            .from(DataSource.collection(lists).as("l"))
            .join(Join.leftOuterJoin(DataSource.collection(tasks).as("t")).on(t("taskList.id").equalTo(Meta.id.from("l"))))
            .groupBy(Expression.property("name").from("l"))
            .orderBy(Ordering.expression(Expression.property("name").from("l")))
        #expect(try Self.rows(db, outer) == [["name": "Chores", "n": 2], ["name": "Empty", "n": 0], ["name": "Groceries", "n": 3]])
        #expect(try Self.rows(db, QueryBuilder.select(SelectResult.expression(Expression.property("name").from("l"))).from(DataSource.collection(lists).as("l"))
            .join(Join.leftJoin(DataSource.collection(tasks).as("t")).on(t("taskList.id").equalTo(Meta.id.from("l"))))
            .where(t("task").isMissing())) == [["name": "Empty"]])

        let pairs = QueryBuilder.select(SelectResult.expression(Function.count(Expression.all())))
            .from(DataSource.collection(lists).as("a")).join(Join.crossJoin(DataSource.collection(lists).as("b")))
        #expect(try Self.column(db, pairs, sameAs: "SELECT COUNT(*) FROM todo.lists a CROSS JOIN todo.lists b") == [9])
        #expect(try Self.column(db, QueryBuilder.select(SelectResult.expression(Meta.id.from("a")))
            .from(DataSource.collection(lists).as("a"))
            .join(Join.innerJoin(DataSource.collection(lists).as("b")).on(Meta.id.from("a").equalTo(Meta.id.from("b"))))
            .orderBy(Ordering.expression(Meta.id.from("a")))) == ["l1", "l2", "l3"])
    }

    @Test func functionsAndMeta() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, _) = try Self.collections(db)
        let task = Expression.property("task")
        let priority = Expression.property("priority")
        let tags = Expression.property("tags")
        func column(_ name: String, _ expression: any ExpressionProtocol) -> any SelectResultProtocol {
            SelectResult.expression(expression).as(name)
        }
        let query = QueryBuilder.select(
            column("lower", Function.lower(task)), column("upper", Function.upper(task)), column("length", Function.length(task)),
            column("has", Function.contains(task, substring: Expression.string("il"))),
            column("trimmed", Function.trim(Expression.string("  x "))), column("ltrim", Function.ltrim(Expression.string("  x"))),
            column("rtrim", Function.rtrim(Expression.string("x  "))),
            column("abs", Function.abs(Expression.negated(priority))), column("rounded", Function.round(priority.divide(Expression.double(3)), digits: Expression.int(2))),
            column("round", Function.round(Expression.double(2.5))), column("truncated", Function.trunc(Expression.double(2.789), digits: Expression.int(1))),
            column("trunc", Function.trunc(Expression.double(-2.7))), column("squared", Function.power(base: priority, exponent: Expression.int(2))),
            column("root", Function.sqrt(Expression.int(4))), column("ceil", Function.ceil(Expression.double(1.2))),
            column("floor", Function.floor(Expression.double(1.8))), column("sign", Function.sign(Expression.int(-3))),
            column("ln", Function.ln(Function.e())), column("log", Function.log(Expression.int(1000))),
            column("exp", Function.exp(Expression.int(0))), column("pi", Function.pi()),
            column("degrees", Function.degrees(Function.pi())), column("radians", Function.radians(Expression.int(180))),
            column("trig", Function.sin(Expression.int(0)).add(Function.cos(Expression.int(0))).add(Function.tan(Expression.int(0)))),
            column("inverse", Function.asin(Expression.int(0)).add(Function.acos(Expression.int(1))).add(Function.atan(Expression.int(0)))),
            column("atan2", Function.atan2(x: Expression.int(1), y: Expression.int(0))),
            column("quarter", Function.atan2(y: Expression.int(1), x: Expression.int(0))),
            column("tagCount", ArrayFunction.length(tags)), column("cold", ArrayFunction.contains(tags, value: Expression.string("cold"))),
            column("isArray", Function.isArray(tags)), column("isString", Function.isString(task)),
            column("isNumber", Function.isNumber(priority)), column("isBoolean", Function.isBoolean(Expression.property("complete"))),
            column("isDictionary", Function.isDictionary(Expression.property("taskList"))),
            column("fallback", Function.ifMissingOrNull(Expression.property("nothing"), Expression.string("none"))),
            column("millis", Function.stringToMillis(Expression.string("2026-11-23T10:00:00Z"))),
            column("text", Function.millisToString(Function.stringToMillis(Expression.string("2026-11-23T10:00:00Z")))),
            column("utc", Function.millisToUTC(Expression.int(0))), column("utcText", Function.stringToUTC(Expression.string("2026-11-23T10:00:00Z"))),
            column("sequenced", Meta.sequence.greaterThan(Expression.int(0))), column("rev", Meta.revisionID),
            column("deleted", Meta.isDeleted), column("expiration", Meta.expiration)
        ).from(DataSource.collection(tasks)).where(Meta.id.equalTo(Expression.string("t1")))
        let row = try #require(try Self.rows(db, query).first)
        #expect(row["lower"] == "milk" && row["upper"] == "MILK" && row["length"] == 4 && row["has"] == true)
        #expect(row["trimmed"] == "x" && row["ltrim"] == "x" && row["rtrim"] == "x")
        #expect(row["abs"] == 2 && row["rounded"] == 0.67 && row["round"] == 3.0 && row["truncated"] == 2.7 && row["trunc"] == -2.0)
        #expect(row["squared"] == 4.0 && row["root"] == 2.0 && row["ceil"] == 2.0 && row["floor"] == 1.0 && row["sign"] == -1)
        func near(_ key: String, _ expected: Double) -> Bool { abs((row[key]?.doubleValue ?? .nan) - expected) < 1e-9 }
        #expect(near("ln", 1) && near("log", 3) && near("exp", 1) && near("pi", .pi) && near("degrees", 180))
        #expect(near("radians", .pi) && near("trig", 1) && near("inverse", 0) && near("atan2", 0) && near("quarter", .pi / 2))
        #expect(row["tagCount"] == 2 && row["cold"] == true && row["isArray"] == true && row["isString"] == true)
        #expect(row["isNumber"] == true && row["isBoolean"] == true && row["isDictionary"] == true && row["fallback"] == "none")
        #expect(row["millis"] == 1_795_428_000_000 && row["text"] == "2026-11-23T10:00:00.000Z")
        #expect(row["utc"] == "1970-01-01T00:00:00.000Z" && row["utcText"] == "2026-11-23T10:00:00.000Z")
        #expect(row["sequenced"] == true && row["rev"]?.stringValue?.hasPrefix("1-") == true && row["deleted"] == false)
        #expect(row["expiration"] == .null)
        // Meta.isDeleted brings deleted documents into the query.
        try tasks.document(id: "t4").map { try tasks.delete(document: $0) }
        #expect(try Self.column(db, QueryBuilder.select(SelectResult.expression(Meta.id)).from(DataSource.collection(tasks))
            .where(Meta.isDeleted.equalTo(Expression.boolean(true)))) == ["t4"])
    }

    @Test func collationsAndRegularExpressions() throws {
        let (directory, db) = try SQLQueryTests.openNames()
        defer { try? db.close(); _ = directory }
        let name = Expression.property("name")
        func names(_ condition: any ExpressionProtocol, _ sql: String, order: (any ExpressionProtocol)? = nil) throws -> [String] {
            let query = QueryBuilder.select(SelectResult.property("name")).from(DataSource.database(db))
                .where(condition).orderBy(Ordering.expression(order ?? name))
            return try Self.column(db, query, sameAs: "SELECT name FROM _ WHERE \(sql)").map { $0?.stringValue ?? "?" }
        }
        let notHello = name.notEqualTo(Expression.string("hello world"))
        #expect(try names(notHello, "name != 'hello world' ORDER BY name COLLATE UNICODE", order: name.collate(Collation.unicode()))
            == ["a", "A", "á", "b", "B", "zoe", "Zoë"])
        #expect(try names(name.collate(Collation.unicode().ignoreCase(true).ignoreAccents(true).locale("en")).equalTo(Expression.string("ZOE")),
            "name COLLATE (UNICODE NOCASE NODIAC) = 'ZOE' ORDER BY name") == ["Zoë", "zoe"])
        #expect(try names(name.equalTo(Expression.string("a")).collate(Collation.unicode().ignoreCase(true)),
            "(name = 'a') COLLATE (UNICODE NOCASE) ORDER BY name") == ["A", "a"])
        #expect(try names(name.collate(Collation.ascii().ignoreCase(true)).equalTo(Expression.string("b")),
            "name COLLATE NOCASE = 'b' ORDER BY name") == ["B", "b"])
        #expect(try names(name.collate(Collation.ascii()).equalTo(Expression.string("b")), "name = 'b' ORDER BY name") == ["b"])
        #expect(try names(name.regex(Expression.string("[Zz]o.")), "REGEXP_LIKE(name, '[Zz]o.') ORDER BY name") == ["Zoë", "zoe"])
    }

    @Test func propertyPaths() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        _ = try db.defaultCollection().putProperties(
            ["a.b": 1, "a": ["b": 2, "list": [["x": "first"], ["x": "second"]]], "select": "reserved", "we`ird": 3], documentID: "d")
        func value(_ path: String) throws -> JSONValue? {
            try Self.column(db, QueryBuilder.select(SelectResult.property(path)).from(DataSource.database(db))).first ?? nil
        }
        #expect(try value("a.b") == 2)
        #expect(try value("a\\.b") == 1)
        #expect(try value("a.list[1].x") == "second")
        #expect(try value("select") == "reserved")
        #expect(try value("we`ird") == 3)
        #expect(try value("a.nothing") == nil)
    }

    @Test func parametersAreBoundNeverSpliced() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, _) = try Self.collections(db)
        let query = QueryBuilder.select(SelectResult.expression(Meta.id)).from(DataSource.collection(tasks))
            .where(Expression.property("task").equalTo(Expression.parameter("task")))
            .orderBy(Ordering.expression(Meta.id))
        query.parameters = Parameters().setString("Milk", forName: "task")
        #expect(try Self.column(db, query) == ["t1"])
        for attempt in ["' OR '1'='1", "Milk'; DROP TABLE documents; --", "x\" OR 1=1 --", "%"] {
            query.parameters = Parameters().setString(attempt, forName: "task")
            #expect(try query.execute().allResults().isEmpty, "\(attempt)")
        }
        // Literal strings are quoted too, so a hostile literal is just text.
        let literal = QueryBuilder.select(SelectResult.expression(Function.count(Expression.all()))).from(DataSource.collection(tasks))
            .where(Expression.property("task").equalTo(Expression.string("x' OR '1'='1")))
        #expect(try Self.column(db, literal) == [0])
        #expect(try Self.column(db, QueryBuilder.select(SelectResult.expression(Function.count(Expression.all())))
            .from(DataSource.collection(tasks))) == [6])
        let limited = QueryBuilder.select(SelectResult.property("task")).from(DataSource.collection(tasks))
            .where(Expression.property("type").equalTo(Expression.string("task"))).orderBy(Ordering.property("task"))
            .limit(Expression.parameter("n"))
        limited.parameters = Parameters().setInt(2, forName: "n")
        #expect(try Self.column(db, limited) == ["Bread", "Cheese"])
    }

    @Test func errorsAreClear() async throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, _) = try Self.collections(db)
        // No FROM yet.
        let select = QueryBuilder.select(SelectResult.property("task"))
        var error = #expect(throws: CouchetteError.self) { try select.execute() }
        #expect(error?.code == .badInput && error?.message.contains("FROM") == true)
        #expect(select.database == nil)
        // A blob is not a literal; an expression of another kind of ExpressionProtocol is refused.
        let blob = Blob(contentType: "text/plain", data: Data("x".utf8))
        error = #expect(throws: CouchetteError.self) {
            try QueryBuilder.select(SelectResult.expression(Expression.value(blob))).from(DataSource.collection(tasks)).execute()
        }
        #expect(error?.code == .badInput)
        struct Foreign: ExpressionProtocol { var description: String { "foreign" } }
        error = #expect(throws: CouchetteError.self) {
            try QueryBuilder.select(SelectResult.expression(Foreign())).from(DataSource.collection(tasks)).execute()
        }
        #expect(error?.code == .badInput)
        struct ForeignSource: DataSourceProtocol {}
        struct ForeignJoin: JoinProtocol {}
        for query in [
            QueryBuilder.select(SelectResult.all()).from(ForeignSource()) as Query,
            QueryBuilder.select(SelectResult.all()).from(DataSource.collection(tasks)).join(ForeignJoin()),
        ] {
            error = #expect(throws: CouchetteError.self) { try query.execute() }
            #expect(error?.code == .badInput && error?.message.contains("QueryBuilder") == true)
        }
        // A collection deleted after the query was built.
        let gone = try db.createCollection(name: "gone", scope: "todo")
        let query = QueryBuilder.select(SelectResult.all()).from(DataSource.collection(gone))
        try db.deleteCollection(name: "gone", scope: "todo")
        error = #expect(throws: CouchetteError.self) { try query.execute() }
        #expect(error?.code == .notFound)
        // A live query with no FROM reports its error to the listener.
        let failures = Inbox<CouchetteError?>()
        let token = select.addChangeListener(withQueue: DispatchQueue(label: "test")) { change in failures.put(change.error) }
        #expect(await next(failures.stream)??.code == .badInput)
        token.remove()
        await #expect(throws: CouchetteError.self) { for try await _ in select.changes() {} }
    }

    @Test func builderEdgeCasesRoundTrip() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, lists) = try Self.collections(db)
        // A parameter name SQL++ cannot write is refused, not spliced.
        let badName = QueryBuilder.select(SelectResult.property("task")).from(DataSource.collection(tasks))
            .where(Expression.property("priority").greaterThan(Expression.parameter("min-priority")))
        badName.parameters = Parameters().setInt(1, forName: "min-priority")
        let error = #expect(throws: CouchetteError.self) { try badName.execute() }
        #expect(error?.status == 400)
        // Negative indexes, the smallest integer, quoted aliases with .*: the description parses back.
        let smallest = QueryBuilder.select(
            SelectResult.expression(Expression.negated(Expression.int64(.min))).as("small"),
            SelectResult.expression(Expression.int64(.min)).as("min"),
            SelectResult.property("tags[-1]").as("last"),
            SelectResult.all().from("the list")
        ).from(DataSource.collection(tasks)).join(Join.crossJoin(DataSource.collection(lists).as("the list")))
            .where(Meta.id.equalTo(Expression.string("t1")).and(Meta.id.from("the list").equalTo(Expression.string("l1"))))
        let row = try #require(try Self.rows(db, smallest).first)
        #expect(row["min"] == .int(.min) && row["last"] == "cold" && row["the list"]?["name"] == "Groceries")
        #expect(row["small"]?.doubleValue == 9.223372036854775808e18)
        try tasks.createIndex(IndexBuilder.valueIndex(items: ValueIndexItem.property("tags[-1]")), name: "lastTag")
        #expect(try tasks.indexes().contains("lastTag"))
    }

    @Test func indexesFromTheBuilder() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, _) = try Self.collections(db)
        try tasks.createIndex(
            IndexBuilder.valueIndex(items: ValueIndexItem.property("taskList.id"), ValueIndexItem.expression(Expression.property("complete"))),
            name: "byList")
        #expect(try tasks.indexes() == ["byList"])
        let query = QueryBuilder.select(SelectResult.property("task")).from(DataSource.collection(tasks))
            .where(Expression.property("taskList.id").equalTo(Expression.string("l1"))
                .and(Expression.property("complete").equalTo(Expression.boolean(false))))
            .orderBy(Ordering.property("task"))
        let plan = try query.explain()
        #expect(plan.contains("USING INDEX ix_") && plan.contains("byList"), "\(plan)")
        #expect(try Self.column(db, query) == ["Cheese", "Milk"])

        _ = try tasks.putProperties(["type": "task", "task": "Café au lait", "complete": false], documentID: "t9")
        try tasks.createIndex(
            IndexBuilder.fullTextIndex(items: FullTextIndexItem.property("task")).ignoreAccents(true).language("en"), name: "taskFTS")
        let index = Expression.fullTextIndex("taskFTS")
        let search = QueryBuilder.select(SelectResult.expression(Meta.id)).from(DataSource.collection(tasks))
            .where(FullTextFunction.match(index, query: "cafe"))
            .orderBy(Ordering.expression(FullTextFunction.rank(index)).descending())
        #expect(try Self.column(db, search) == ["t9"])
        let aliased = QueryBuilder.select(SelectResult.expression(Meta.id.from("t"))).from(DataSource.collection(tasks).as("t"))
            .where(FullTextFunction.match(index.from("t"), query: Expression.parameter("terms")))
            .orderBy(Ordering.expression(Meta.id.from("t")))
        aliased.parameters = Parameters().setString("milk OR cheeses", forName: "terms")
        #expect(try Self.column(db, aliased) == ["t1", "t3"])
        // The older forms that name the index.
        let byName = QueryBuilder.select(SelectResult.expression(Meta.id)).from(DataSource.collection(tasks))
            .where(FullTextFunction.match(indexName: "taskFTS", query: "bread"))
            .orderBy(Ordering.expression(FullTextFunction.rank("taskFTS")).descending())
        #expect(try Self.column(db, byName) == ["t2"])
        // Index items as arrays.
        try tasks.createIndex(IndexBuilder.valueIndex(items: [ValueIndexItem.property("priority")]), name: "byPriority")
        try tasks.createIndex(IndexBuilder.fullTextIndex(items: [FullTextIndexItem.property("type")]), name: "typeFTS")
        #expect(try tasks.indexes() == ["byList", "byPriority", "taskFTS", "typeFTS"])
    }

    /// The README's example, as written there.
    @Test func readmeExample() throws {
        let (directory, db) = try SQLQueryTests.openFilled()
        defer { try? db.close(); _ = directory }
        let (tasks, lists) = try Self.collections(db)
        let query = QueryBuilder
            .select(SelectResult.expression(Meta.id), SelectResult.property("task"))
            .from(DataSource.collection(tasks).as("t"))
            .join(Join.leftJoin(DataSource.collection(lists).as("l"))
                .on(Meta.id.from("l").equalTo(Expression.property("taskList.id").from("t"))))
            .where(Expression.property("complete").from("t").equalTo(Expression.boolean(false))
                .and(Expression.property("owner").from("l").equalTo(Expression.parameter("owner"))))
            .orderBy(Ordering.property("task").descending())
            .limit(Expression.int(20))
        query.parameters = Parameters().setString("alice", forName: "owner")
        try tasks.createIndex(IndexBuilder.valueIndex(items: ValueIndexItem.property("taskList.id")), name: "byList")
        #expect(try Self.rows(db, query) == [["id": "t1", "task": "Milk"], ["id": "t3", "task": "Cheese"]])
    }

    @Test func liveBuilderQueries() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("todo")
        try SQLQueryTests.fill(db)
        let (tasks, _) = try Self.collections(db)
        let query = QueryBuilder.select(SelectResult.expression(Function.count(Expression.all())).as("n"))
            .from(DataSource.collection(tasks))
            .where(Expression.property("complete").equalTo(Expression.boolean(false)))
        let (inbox, task) = liveCounts(query)
        #expect(await next(inbox.stream) == 3)
        _ = try tasks.putProperties(["type": "task", "task": "New", "complete": false], documentID: "t6")
        #expect(await next(inbox.stream) == 4)
        try db.close()
        #expect(await next(inbox.stream) == .some(nil))
        try await task.value
    }
}
