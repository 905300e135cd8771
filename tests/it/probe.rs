//! What the wire tests measure of the server process, on each OS: its CPU time (user +
//! system, in ticks of 1/100 s) and its resident memory (KiB). Linux reads `/proc/PID`,
//! macOS asks `ps` (it has no `/proc`), Windows asks the kernel (`GetProcessTimes`,
//! `K32GetProcessMemoryInfo`). Peak memory (`VmHWM`) has no such equivalent on macOS: the
//! tests that read it stay Linux-only.

/// CPU time (user + system) the process has used, in ticks of 1/100 s.
#[cfg(target_os = "linux")]
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // after_comm starts at field 3 (state): utime is field 14, stime field 15, in clock
    // ticks of 1/100 s (USER_HZ).
    let utime: u64 = fields[14 - 3].parse().unwrap();
    let stime: u64 = fields[15 - 3].parse().unwrap();
    utime + stime
}

/// Resident memory of the process in KiB (`VmRSS`).
#[cfg(target_os = "linux")]
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

/// `ps -o FIELD= -p PID`, trimmed.
#[cfg(target_os = "macos")]
fn ps(pid: u32, field: &str) -> String {
    let out = std::process::Command::new("ps")
        .args(["-o", &format!("{field}="), "-p", &pid.to_string()])
        .output()
        .expect("run ps");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// CPU time (user + system) the process has used, in ticks of 1/100 s.
#[cfg(target_os = "macos")]
pub fn cpu_ticks(pid: u32) -> u64 {
    let text = ps(pid, "time");
    ps_time_ticks(&text).unwrap_or_else(|| panic!("ps time of {pid}: {text:?}"))
}

/// Resident memory of the process in KiB.
#[cfg(target_os = "macos")]
pub fn rss_kib(pid: u32) -> u64 {
    let text = ps(pid, "rss");
    text.parse()
        .unwrap_or_else(|_| panic!("ps rss of {pid}: {text:?}"))
}

/// `ps`'s CPU time, `[[DD-]HH:]MM:SS.ss`, in ticks of 1/100 s.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub fn ps_time_ticks(text: &str) -> Option<u64> {
    let (days, clock) = match text.split_once('-') {
        Some((days, clock)) => (days.parse::<u64>().ok()?, clock),
        None => (0, text),
    };
    let mut parts: Vec<&str> = clock.split(':').collect();
    let seconds: f64 = parts.pop()?.parse().ok()?;
    let mut whole = days * 86_400;
    let mut unit = 60;
    while let Some(part) = parts.pop() {
        whole += part.parse::<u64>().ok()? * unit;
        unit *= 60;
    }
    Some(whole * 100 + (seconds * 100.0).round() as u64)
}

/// An open handle on process `pid` that may query its times and memory.
#[cfg(windows)]
#[allow(unsafe_code)]
fn with_process<T>(pid: u32, f: impl FnOnce(windows_sys::Win32::Foundation::HANDLE) -> T) -> T {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};
    // SAFETY: plain calls with a process id; the handle is closed below.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    assert!(!handle.is_null(), "OpenProcess({pid}) failed");
    let value = f(handle);
    // SAFETY: the handle was opened above and is not used after this.
    unsafe { CloseHandle(handle) };
    value
}

/// CPU time (user + system) the process has used, in ticks of 1/100 s.
#[cfg(windows)]
#[allow(unsafe_code)]
pub fn cpu_ticks(pid: u32) -> u64 {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::GetProcessTimes;
    let hundreds = |t: FILETIME| ((t.dwHighDateTime as u64) << 32) | t.dwLowDateTime as u64;
    with_process(pid, |handle| {
        let zero = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
        // SAFETY: four valid out-pointers to FILETIMEs and an open process handle.
        let ok =
            unsafe { GetProcessTimes(handle, &mut created, &mut exited, &mut kernel, &mut user) };
        assert!(ok != 0, "GetProcessTimes({pid}) failed");
        // FILETIME counts 100 ns: 100,000 of them make a tick of 10 ms.
        (hundreds(kernel) + hundreds(user)) / 100_000
    })
}

/// Resident memory (the working set) of the process in KiB.
#[cfg(windows)]
#[allow(unsafe_code)]
pub fn rss_kib(pid: u32) -> u64 {
    use windows_sys::Win32::System::ProcessStatus::{
        K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    with_process(pid, |handle| {
        let mut counters = PROCESS_MEMORY_COUNTERS::default();
        let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        counters.cb = size;
        // SAFETY: a valid out-pointer of the size given, and an open process handle.
        let ok = unsafe { K32GetProcessMemoryInfo(handle, &mut counters, size) };
        assert!(ok != 0, "K32GetProcessMemoryInfo({pid}) failed");
        counters.WorkingSetSize as u64 / 1024
    })
}

#[test]
fn ps_times_read_as_ticks() {
    assert_eq!(ps_time_ticks("0:00.05"), Some(5));
    assert_eq!(ps_time_ticks("1:02.50"), Some(6250));
    assert_eq!(ps_time_ticks("1:00:00.00"), Some(360_000));
    assert_eq!(ps_time_ticks("2-00:00:01.00"), Some(2 * 8_640_000 + 100));
    assert_eq!(ps_time_ticks("junk"), None);
}
