#!/usr/bin/env python3
"""What PIPESPEED_NO_SPLICE=1 costs: pipespeed cat copying a file into a
pipe against passing its page-cache pages, with GNU cat beside, same run.

Usage: peers/cat-no-splice.py [--runs N] [--size SIZE]

  X F | pipe_ref read --splice, for X = pipespeed cat, PIPESPEED_NO_SPLICE=1
  pipespeed cat, GNU cat. Runs alternate, flipping the order every run;
  medians. Data and references as peers/cat-vs.py prepares them.
"""

from benchlib import alternate, data_args, gib_s_of_reader, header, medians, prepare, print_samples


def main():
    args = data_args(__doc__)
    t = prepare(args)
    tools = {
        "splice": t["pipespeed_bin"] + " cat",
        "no-splice": "PIPESPEED_NO_SPLICE=1 " + t["pipespeed_bin"] + " cat",
        "gnu": t["gnu"],
    }
    reader = f"{t['pipe_ref']} read --splice --bytes {args.size}"
    header("cat-no-splice.py", args)
    s = alternate(args.runs, list(tools),
                  lambda k: gib_s_of_reader(f"{tools[k]} {t['big']} | {reader}"))
    print_samples("file -> pipe", s)
    med = medians(s)
    print("| pipespeed cat | PIPESPEED_NO_SPLICE=1 | GNU cat | no-splice / splice | no-splice / GNU |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {med['splice']:.2f} | {med['no-splice']:.2f} | {med['gnu']:.2f} | "
          f"{med['no-splice'] / med['splice']:.2f} | {med['no-splice'] / med['gnu']:.2f} |")


if __name__ == "__main__":
    main()
