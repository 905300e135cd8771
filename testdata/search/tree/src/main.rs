fn main() {
    let Needle = rootgrep_fixture::needle();
    println!("{}", Needle);
}
