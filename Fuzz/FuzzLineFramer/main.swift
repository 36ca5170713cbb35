// libFuzzer target for the line framer (docs/RELIABILITY.md, "Fuzzing").
//
// Input layout: byte 0 picks `maxLineBytes`, byte 1 seeds the sizes of the
// chunks the rest is fed in (empty chunks included), the rest is the byte
// stream a client sent. After every `append` the target checks the framer
// against the stream itself:
// - every line is at most `maxLineBytes`, holds no `\n`, and the lines
//   re-joined with the `\n` (or `\r\n`) that ended each are exactly the
//   stream's prefix: nothing lost, reordered, duplicated or invented;
// - `.ok` means every complete line fed so far was handed over and the
//   buffered rest is `pendingBytes`, at most `maxLineBytes + 1` bytes;
// - `.lineTooLong` only when the next line really is too long (or its
//   unterminated part already is).
//
// Built with `-sanitize=fuzzer` and `-D LOOPD_LIBFUZZER` (Fuzz/run.sh), libFuzzer
// supplies `main`; in an ordinary build the `@main` below replays files
// instead: `FuzzLineFramer Fuzz/corpus/FuzzLineFramer/*`.
import Glibc
import LoopdProtocol
import FuzzReplay

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let maxLine = data[0] & 0x80 == 0 ? 1 + Int(data[0] % 64) : 1 + Int(data[0] & 0x7F) * 16
    var rng = UInt32(data[1]) | 0x100
    let stream = UnsafeBufferPointer(start: data + 2, count: size - 2)

    var framer = LineFramer(maxLineBytes: maxLine)
    var fed = 0  // bytes of the stream handed to the framer
    var framed = 0  // bytes of the stream accounted for by lines and their terminators
    repeat {
        rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5
        let n = min(Int(rng % UInt32(2 * maxLine + 3)), stream.count - fed)
        let chunk = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: stream[fed..<fed + n]))
        fed += n
        let outcome = framer.append(chunk) { line in
            precondition(line.count <= maxLine, "a line of \(line.count) bytes passed a limit of \(maxLine)")
            precondition(!line.contains(0x0A), "a line contains a newline")
            precondition(framed + line.count <= fed, "a line holds bytes not fed yet")
            precondition(line.elementsEqual(stream[framed..<framed + line.count]), "a line differs from the stream")
            var end = framed + line.count
            if end < fed, stream[end] == 0x0D { end += 1 }
            precondition(end < fed && stream[end] == 0x0A, "a line was handed over without its newline")
            framed = end + 1
        }
        let rest = stream[framed..<fed]
        switch outcome {
        case .ok:
            precondition(!rest.contains(0x0A), "a complete line was kept back")
            precondition(framer.pendingBytes == rest.count, "pendingBytes \(framer.pendingBytes), expected \(rest.count)")
            precondition(rest.count <= maxLine + 1, "\(rest.count) bytes buffered for a limit of \(maxLine)")
        case .lineTooLong:
            if let newline = rest.firstIndex(of: 0x0A) {
                var length = newline - framed
                if length > 0, stream[newline - 1] == 0x0D { length -= 1 }
                precondition(length > maxLine, "lineTooLong for a line of \(length) bytes, limit \(maxLine)")
            } else {
                precondition(rest.count > maxLine + 1, "lineTooLong for a partial line of \(rest.count) bytes")
            }
            return 0  // the owner closes the connection here
        }
    } while fed < stream.count
    return 0
}

#if !LOOPD_LIBFUZZER
/// Without libFuzzer: replays the files named on the command line.
@main enum Replay {
    static func main() { replayCorpusFiles(target: "FuzzLineFramer", fuzz) }
}
#endif
