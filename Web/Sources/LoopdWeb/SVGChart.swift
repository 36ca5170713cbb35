import Foundation

/// A line chart drawn on the server as inline SVG: no script, no font or
/// library from the network. Each value is placed by its time on an axis
/// that ends at `end` and spans `span` seconds, from 0 to the largest
/// value; a missing value (nil) breaks its line.
struct SVGChart: Sendable {
    struct Line: Sendable {
        var name: String
        /// A CSS class of the stylesheet (`s1`…`s3`), which gives its colour.
        var style: String
        var values: [Double?]
    }

    var title: String
    var lines: [Line]
    /// The instant of each value (every line has one value per instant).
    var times: [Date]
    var end: Date
    var span: TimeInterval
    /// How an axis value is written (`12/s`, `35 ms`).
    var format: @Sendable (Double) -> String
    /// The x axis's span, written under it (`10 min ago`).
    var spanText: String

    static let width = 600.0
    static let height = 150.0
    static let left = 56.0
    static let bottom = 20.0
    static let top = 8.0

    var svg: HTML {
        let w = Self.width, h = Self.height
        let plotW = w - Self.left - 8, plotH = h - Self.bottom - Self.top
        let all = lines.flatMap { $0.values.compactMap { $0 } }
        let top = Self.niceCeiling(all.max() ?? 0)
        func x(_ i: Int) -> Double {
            let ago = i < times.count ? end.timeIntervalSince(times[i]) : span
            return Self.left + plotW * min(1, max(0, 1 - ago / span))
        }
        func y(_ v: Double) -> Double { Self.top + plotH - (top > 0 ? plotH * v / top : 0) }
        var paths: [HTML] = []
        for line in lines {
            var d = ""
            var pen = false
            for (i, v) in line.values.enumerated() {
                guard let v else { pen = false; continue }
                d += String(format: "%@%.1f %.1f ", pen ? "L" : "M", x(i), y(v))
                pen = true
            }
            paths.append("<path class=\"line \(line.style)\" d=\"\(d)\"><title>\(line.name)</title></path>")
        }
        let latest = lines.map { l in "\(l.name) \(l.values.last.flatMap { $0 }.map(format) ?? "none")" }
            .joined(separator: ", ")
        let legend: [HTML] = lines.map { "<li><span class=\"key \($0.style)\"></span>\($0.name)</li>" }
        let gridY = [0.0, 0.5, 1.0].map { f -> HTML in
            let yy = String(format: "%.1f", y(top * f))
            return "<line class=\"grid\" x1=\"\(String(format: "%.0f", Self.left))\" x2=\"\(String(format: "%.0f", w - 8))\" y1=\"\(yy)\" y2=\"\(yy)\"/><text class=\"axis\" x=\"\(String(format: "%.0f", Self.left - 6))\" y=\"\(yy)\" dy=\"4\" text-anchor=\"end\">\(format(top * f))</text>"
        }
        return """
            <figure class="chart"><figcaption>\(title)</figcaption>\
            <svg viewBox="0 0 \(Int(w)) \(Int(h))" role="img" aria-label="\(title): latest \(latest)">\
            \(gridY)\(paths)\
            <text class="axis" x="\(Int(Self.left))" y="\(Int(h - 4))">\(spanText)</text>\
            <text class="axis" x="\(Int(w - 8))" y="\(Int(h - 4))" text-anchor="end">now</text></svg>\
            <ul class="legend">\(legend)</ul></figure>
            """
    }

    /// The smallest of 1, 2, 2.5, 5 times a power of ten that is at least `v`
    /// (1 for 0): the top of the axis.
    static func niceCeiling(_ v: Double) -> Double {
        guard v > 0, v.isFinite else { return 1 }
        let p = pow(10, floor(log10(v)))
        for m in [1.0, 2, 2.5, 5, 10] where m * p >= v * (1 - 1e-9) { return m * p }
        return 10 * p
    }
}
