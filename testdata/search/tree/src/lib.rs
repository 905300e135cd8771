pub fn needle() -> u32 {
    42
}

/// Calls needle twice.
pub fn twice() -> u32 {
    needle() + needle()
}
