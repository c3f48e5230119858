//! The hypervisor, named as `systemd-detect-virt --vm` names it (`kvm`,
//! `qemu`, `xen`, ..., `vm-other`, `none`), found from files only: a pipe's
//! speed depends on how it schedules the vCPUs and what a wake-up costs.
//!
//! The order follows systemd's `detect_vm()`: the DMI vendors that win
//! even over KVM, User-Mode Linux, what the hypervisor says of itself,
//! then the other DMI vendors. Where systemd asks CPUID, the clock sources
//! stand in (`kvm-clock`, `hyperv_clocksource_tsc_page`, `xen`), so a KVM
//! guest without DMI tables (Firecracker) is `kvm`, as systemd says.
//! Containers are not reported: the machine under them is what counts.
//!
//! # References
//! - systemd, [src/basic/virt.c](https://github.com/systemd/systemd/blob/main/src/basic/virt.c)
//! - [systemd-detect-virt(1)](https://man7.org/linux/man-pages/man1/systemd-detect-virt.1.html)

use std::fs;

/// The files read, as text (`None`: absent or unreadable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Evidence<'a> {
    /// `/sys/class/dmi/id/product_name`.
    pub product_name: Option<&'a str>,
    /// `/sys/class/dmi/id/sys_vendor`.
    pub sys_vendor: Option<&'a str>,
    /// `/sys/class/dmi/id/board_vendor`.
    pub board_vendor: Option<&'a str>,
    /// `/sys/class/dmi/id/bios_vendor`.
    pub bios_vendor: Option<&'a str>,
    /// `/sys/class/dmi/id/product_version` (`Hyper-V ...` on Hyper-V).
    pub product_version: Option<&'a str>,
    /// `/sys/hypervisor/type` (`xen`).
    pub hypervisor_type: Option<&'a str>,
    /// `/proc/cpuinfo`.
    pub cpuinfo: Option<&'a str>,
    /// `/sys/devices/system/clocksource/clocksource0/available_clocksource`.
    pub clocksources: Option<&'a str>,
}

/// systemd's DMI vendor table: a DMI field starting with the prefix names
/// the hypervisor.
const DMI_VENDORS: [(&str, &str); 17] = [
    ("KVM", "kvm"),
    ("OpenStack", "kvm"),
    ("KubeVirt", "kvm"),
    ("Amazon EC2", "amazon"),
    ("QEMU", "qemu"),
    ("VMware", "vmware"),
    ("VMW", "vmware"),
    ("innotek GmbH", "oracle"),
    ("VirtualBox", "oracle"),
    ("Oracle Corporation", "oracle"),
    ("Xen", "xen"),
    ("Bochs", "bochs"),
    ("Parallels", "parallels"),
    ("BHYVE", "bhyve"),
    ("Hyper-V", "microsoft"),
    ("Apple Virtualization", "apple"),
    ("Google Compute Engine", "google"),
];

/// DMI answers systemd trusts before asking the CPU: these run on KVM
/// (or cloak as Hyper-V) but are named for themselves.
const DMI_FIRST: [&str; 5] = ["oracle", "xen", "amazon", "parallels", "google"];

/// Reads the files and names the hypervisor (see [`classify`]).
pub(crate) fn detect() -> Option<String> {
    let read = |path: &str| fs::read_to_string(path).ok();
    let dmi = |field: &str| read(&format!("/sys/class/dmi/id/{field}"));
    let (product_name, sys_vendor, board_vendor, bios_vendor, product_version) = (
        dmi("product_name"),
        dmi("sys_vendor"),
        dmi("board_vendor"),
        dmi("bios_vendor"),
        dmi("product_version"),
    );
    let hypervisor_type = read("/sys/hypervisor/type");
    let cpuinfo = read("/proc/cpuinfo");
    let clocksources = read("/sys/devices/system/clocksource/clocksource0/available_clocksource");
    classify(&Evidence {
        product_name: product_name.as_deref(),
        sys_vendor: sys_vendor.as_deref(),
        board_vendor: board_vendor.as_deref(),
        bios_vendor: bios_vendor.as_deref(),
        product_version: product_version.as_deref(),
        hypervisor_type: hypervisor_type.as_deref(),
        cpuinfo: cpuinfo.as_deref(),
        clocksources: clocksources.as_deref(),
    })
}

/// The hypervisor the files name; `Some("none")` when the CPU says there
/// is none (x86's `hypervisor` flag is absent from `/proc/cpuinfo`'s
/// `flags`), `Some("vm-other")` for a hypervisor not recognised, `None`
/// when nothing tells (no `flags` line, as on arm64, and no DMI vendor).
pub(crate) fn classify(e: &Evidence) -> Option<String> {
    let dmi = dmi_vendor(e);
    if let Some(name) = dmi.filter(|name| DMI_FIRST.contains(name)) {
        // An EC2 bare-metal instance has the same vendor; systemd tells
        // it by `.metal` in the product name when SMBIOS is unreadable.
        let metal = e.product_name.is_some_and(|p| p.contains(".metal"));
        return Some(
            if name == "amazon" && metal {
                "none"
            } else {
                name
            }
            .into(),
        );
    }
    let cpuinfo = e.cpuinfo.unwrap_or("");
    if field(cpuinfo, "vendor_id").is_some_and(|v| v.starts_with("User Mode Linux")) {
        return Some("uml".into());
    }
    if e.hypervisor_type.map(str::trim) == Some("xen") {
        return Some("xen".into());
    }
    let clocks: Vec<&str> = e.clocksources.unwrap_or("").split_whitespace().collect();
    if clocks.contains(&"kvm-clock") {
        return Some("kvm".into());
    }
    if clocks.contains(&"xen") {
        return Some("xen".into());
    }
    // QEMU offers Hyper-V's interfaces to Windows guests too: as systemd
    // does with Hyper-V's CPUID, believe DMI before it.
    let hyperv = clocks.iter().any(|c| c.starts_with("hyperv_clocksource"));
    if let Some(name) = dmi {
        return Some(name.into());
    }
    if microsoft_vm(e) || hyperv {
        return Some("microsoft".into());
    }
    let flags = field(cpuinfo, "flags").map(|f| f.split_whitespace().any(|f| f == "hypervisor"));
    match (flags, e.hypervisor_type) {
        (Some(true), _) | (_, Some(_)) => Some("vm-other".into()),
        (Some(false), None) => Some("none".into()),
        (None, None) => None,
    }
}

/// The first DMI field, in systemd's order, that starts with a known
/// vendor (the product name first: `KVM` there beats `QEMU` as vendor).
fn dmi_vendor(e: &Evidence) -> Option<&'static str> {
    let fields = [
        e.product_name,
        e.sys_vendor,
        e.board_vendor,
        e.bios_vendor,
        e.product_version,
    ];
    fields.into_iter().flatten().find_map(|text| {
        let text = text.trim();
        (DMI_VENDORS.iter())
            .find(|(prefix, _)| text.starts_with(prefix))
            .map(|&(_, name)| name)
    })
}

/// Hyper-V's DMI: vendor `Microsoft Corporation`, product `Virtual
/// Machine` (a Surface or an Xbox has the vendor, not the product).
fn microsoft_vm(e: &Evidence) -> bool {
    let starts =
        |text: Option<&str>, prefix: &str| text.is_some_and(|t| t.trim().starts_with(prefix));
    starts(e.sys_vendor, "Microsoft Corporation") && starts(e.product_name, "Virtual Machine")
}

/// The value of the first `name : value` line of `/proc/cpuinfo`.
fn field<'a>(cpuinfo: &'a str, name: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86_GUEST: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\n\
                             model name\t: AMD EPYC\nflags\t\t: fpu vme de pse tsc hypervisor lahf_lm\n";
    const X86_METAL: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\n\
                             flags\t\t: fpu vme de pse tsc msr pae lahf_lm\n";
    const ARM64: &str = "processor\t: 0\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm\n";

    fn name(e: Evidence) -> Option<String> {
        classify(&e)
    }

    #[test]
    fn a_firecracker_guest_without_dmi_is_kvm_by_its_clock() {
        // This project's VM: no /sys/class/dmi, kvm-clock registered.
        let e = Evidence {
            cpuinfo: Some(X86_GUEST),
            clocksources: Some("tsc kvm-clock \n"),
            ..Evidence::default()
        };
        assert_eq!(name(e).as_deref(), Some("kvm"));
    }

    #[test]
    fn dmi_names_the_hypervisor_product_name_first() {
        let qemu = Evidence {
            sys_vendor: Some("QEMU\n"),
            product_name: Some("Standard PC (Q35 + ICH9, 2009)\n"),
            cpuinfo: Some(X86_GUEST),
            ..Evidence::default()
        };
        // QEMU without KVM (TCG): no kvm-clock, DMI says QEMU.
        assert_eq!(name(qemu).as_deref(), Some("qemu"));
        // QEMU with KVM: the clock says KVM, as CPUID would.
        let kvm = Evidence {
            clocksources: Some("kvm-clock tsc acpi_pm\n"),
            ..qemu
        };
        assert_eq!(name(kvm).as_deref(), Some("kvm"));
        let cases = [
            (Some("KVM\n"), Some("Red Hat\n"), "kvm"),
            (
                Some("VMware Virtual Platform\n"),
                Some("VMware, Inc.\n"),
                "vmware",
            ),
            (Some("VirtualBox\n"), Some("innotek GmbH\n"), "oracle"),
            (Some("HVM domU\n"), Some("Xen\n"), "xen"),
            (Some("Google Compute Engine\n"), Some("Google\n"), "google"),
            (Some("c5.large\n"), Some("Amazon EC2\n"), "amazon"),
            (Some("m5.metal\n"), Some("Amazon EC2\n"), "none"),
        ];
        for (product, vendor, expected) in cases {
            let e = Evidence {
                product_name: product,
                sys_vendor: vendor,
                cpuinfo: Some(X86_GUEST),
                ..Evidence::default()
            };
            assert_eq!(name(e).as_deref(), Some(expected), "{product:?} {vendor:?}");
        }
    }

    #[test]
    fn amazon_and_google_win_over_their_kvm_clock() {
        let e = Evidence {
            sys_vendor: Some("Amazon EC2\n"),
            clocksources: Some("kvm-clock tsc\n"),
            cpuinfo: Some(X86_GUEST),
            ..Evidence::default()
        };
        assert_eq!(name(e).as_deref(), Some("amazon"));
    }

    #[test]
    fn hyper_v_is_microsoft_by_dmi_or_by_its_clock() {
        let dmi = Evidence {
            sys_vendor: Some("Microsoft Corporation\n"),
            product_name: Some("Virtual Machine\n"),
            cpuinfo: Some(X86_GUEST),
            ..Evidence::default()
        };
        assert_eq!(name(dmi).as_deref(), Some("microsoft"));
        let clock = Evidence {
            clocksources: Some("hyperv_clocksource_tsc_page acpi_pm\n"),
            cpuinfo: Some(X86_GUEST),
            ..Evidence::default()
        };
        assert_eq!(name(clock).as_deref(), Some("microsoft"));
        // A Microsoft laptop is not a virtual machine.
        let surface = Evidence {
            sys_vendor: Some("Microsoft Corporation\n"),
            product_name: Some("Surface Laptop 5\n"),
            cpuinfo: Some(X86_METAL),
            ..Evidence::default()
        };
        assert_eq!(name(surface).as_deref(), Some("none"));
    }

    #[test]
    fn xen_is_named_by_sys_hypervisor() {
        let e = Evidence {
            hypervisor_type: Some("xen\n"),
            cpuinfo: Some(X86_GUEST),
            ..Evidence::default()
        };
        assert_eq!(name(e).as_deref(), Some("xen"));
        let other = Evidence {
            hypervisor_type: Some("s390\n"),
            ..Evidence::default()
        };
        assert_eq!(name(other).as_deref(), Some("vm-other"));
    }

    #[test]
    fn user_mode_linux_says_so_in_cpuinfo() {
        let e = Evidence {
            cpuinfo: Some("processor\t: 0\nvendor_id\t: User Mode Linux\nmodel name\t: UML\n"),
            ..Evidence::default()
        };
        assert_eq!(name(e).as_deref(), Some("uml"));
    }

    #[test]
    fn the_hypervisor_flag_alone_is_some_vm() {
        let e = Evidence {
            cpuinfo: Some(X86_GUEST),
            ..Evidence::default()
        };
        assert_eq!(name(e).as_deref(), Some("vm-other"));
    }

    #[test]
    fn bare_metal_only_when_the_cpu_flags_say_so() {
        let metal = Evidence {
            cpuinfo: Some(X86_METAL),
            sys_vendor: Some("Dell Inc.\n"),
            product_name: Some("PowerEdge R650\n"),
            clocksources: Some("tsc hpet acpi_pm\n"),
            ..Evidence::default()
        };
        assert_eq!(name(metal).as_deref(), Some("none"));
        // arm64 has no hypervisor flag: without DMI, nothing tells.
        let arm = Evidence {
            cpuinfo: Some(ARM64),
            clocksources: Some("arch_sys_counter\n"),
            ..Evidence::default()
        };
        assert_eq!(name(arm), None);
        assert_eq!(name(Evidence::default()), None);
        // A flag that merely contains the word is not the flag.
        let near = Evidence {
            cpuinfo: Some("flags\t\t: fpu nothypervisor\n"),
            ..Evidence::default()
        };
        assert_eq!(name(near).as_deref(), Some("none"));
    }
}
