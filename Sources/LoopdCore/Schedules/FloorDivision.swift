/// Division rounding toward negative infinity, so instants before 1970 fall
/// on the day they belong to.
func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

/// The remainder that goes with `floorDivide`: never negative for b > 0.
func floorModulo(_ a: Int64, _ b: Int64) -> Int64 {
    a - floorDivide(a, b) * b
}
