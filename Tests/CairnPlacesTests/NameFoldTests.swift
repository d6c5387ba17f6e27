import Testing

// Name folding beyond Latin: Greek and Cyrillic case and accents, German ß, Turkish dotted and dotless i,
// combining marks wherever they are, full-width ASCII; scripts without case (CJK) unchanged. And that a search
// through the catalog finds a name from either side of each fold.
@testable import CairnPlaces

@Suite(.timeLimit(.minutes(5)))
struct NameFoldTests {
    @Test func foldsGreekCaseAccentsAndFinalSigma() {
        #expect(NameFold.fold("ΣΊΦΝΟΣ") == "σιφνοσ")
        #expect(NameFold.fold("Σίφνος") == NameFold.fold("ΣΙΦΝΟΣ"))
        #expect(NameFold.fold("Ἀθῆναι") == "αθηναι")  // polytonic: psili, perispomeni
        #expect(NameFold.fold("Ϊ ΐ ΰ") == "ι ι υ")  // dialytika with and without tonos
        #expect(NameFold.fold("ᾯ") == "ω")  // omega with dasia, perispomeni and prosgegrammeni
    }

    @Test func foldsCyrillicCaseAndAccents() {
        #expect(NameFold.fold("МОСКВА") == "москва")
        #expect(NameFold.fold("Ёлкино") == "елкино")
        #expect(NameFold.fold("ѐ Ӱ") == "е у")
        #expect(NameFold.fold("Йошкар-Ола") == "йошкар-ола")  // й is a letter of its own
        #expect(NameFold.fold("КИЇВ") == "київ")  // so is ї
        #expect(NameFold.fold("Ё") == NameFold.fold("Е\u{308}"))  // decomposed
    }

    @Test func foldsLettersOfTheirOwnAlikeWrittenPrecomposedOrDecomposed() {
        #expect(NameFold.fold("И\u{306}ошкар-Ола") == "йошкар-ола")
        #expect(NameFold.fold("Киі\u{308}в") == "київ")
        #expect(NameFold.fold("У\u{306}збекистон") == NameFold.fold("Ўзбекистон"))
        #expect(NameFold.fold("Г\u{301}орче") == NameFold.fold("Ѓорче"))
        #expect(NameFold.fold("К\u{301}") == NameFold.fold("Ќ"))
        #expect(NameFold.fold("か\u{3099}") == "が")
        #expect(NameFold.fold("ハ\u{309A}リ") == "パリ")
        #expect(NameFold.fold("ウ\u{3099}ェ") == "ヴェ")
        // A mark that makes no letter of its own is still dropped.
        #expect(NameFold.fold("и\u{301}") == "и")
    }

    @Test func foldsSharpSAndTurkishI() {
        #expect(NameFold.fold("Straße") == "strasse")
        #expect(NameFold.fold("STRASSE") == NameFold.fold("Straße"))
        #expect(NameFold.fold("GROẞE") == "grosse")
        #expect(NameFold.fold("İstanbul") == "istanbul")
        #expect(NameFold.fold("Diyarbakır") == "diyarbakir")
        #expect(NameFold.fold("IĞDIR") == "igdir")
        #expect(NameFold.fold("ſtraſſe") == "strasse")
    }

    @Test func dropsCombiningMarksAnywhere() {
        #expect(NameFold.fold("Cafe\u{301}") == "cafe")
        #expect(NameFold.fold("Z\u{30C}ilina") == "zilina")
        #expect(NameFold.fold("α\u{301}") == "α")
        #expect(NameFold.fold("\u{301}Alp") == "alp")
        #expect(NameFold.fold("I\u{307}zmir") == "izmir")
    }

    @Test func leavesScriptsWithoutCaseAlone() {
        #expect(NameFold.fold("東京") == "東京")
        #expect(NameFold.fold("とうきょう") == "とうきょう")
        #expect(NameFold.fold("서울") == "서울")
        #expect(NameFold.fold("القاهرة") == "القاهرة")
        #expect(NameFold.fold("北京 Beijing") == "北京 beijing")
    }

    @Test func foldsFullWidthASCII() {
        #expect(NameFold.fold("ＴＯＫＹＯ　Ｔｏｗｅｒ") == "tokyo tower")
    }

    @Test func searchFindsNamesAcrossFolds() {
        let names = ["Σίφνος", "Москва", "Ёлкино", "Straße des 17. Juni", "İstanbul", "Diyarbakır", "東京タワー"]
        let places = names.enumerated().map {
            PlaceSummary(id: Int64($0.offset + 1), name: $0.element, category: "city", lat: 0, lon: 0)!
        }
        let catalog = PlaceCatalog(places)
        let queries: [(String, Int64)] = [
            ("ΣΙΦ", 1), ("σιφνος", 1), ("МОСК", 2), ("елк", 3), ("strasse", 4), ("STRASSE DES", 4),
            ("istan", 5), ("ISTAN", 5), ("diyarbakir", 6), ("DİYARBAKIR", 6), ("東京", 7),
        ]
        for (query, id) in queries {
            #expect(catalog.search(query, limit: 10).map(\.id) == [id], "search \(query)")
        }
        #expect(catalog.search("京", limit: 10).isEmpty)
    }
}
