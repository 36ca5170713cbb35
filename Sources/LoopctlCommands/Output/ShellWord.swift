/// Words of a command line a person can paste into a POSIX shell.
enum ShellWord {
    /// `word` as it is when the shell reads it so, else in single quotes.
    static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { c in
            c.isASCII && (("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || "-_./:=+@%,".unicodeScalars.contains(c))
        }
        if plain { return word }
        // Inside single quotes only the quote itself is special: each one
        // is written as close quote, escaped quote, open quote.
        return "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}
