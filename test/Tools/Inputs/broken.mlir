func.func @f() {
  %0 = "foo"() : () -> i32
  %1 = bar
}
