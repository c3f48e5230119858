#!/usr/bin/env python3
"""What PIPESPEED_NO_SPLICE=1 costs: pipespeed cat copying a file into a
pipe against passing its page-cache pages, with GNU cat beside, same run.

Usage: bench/cat-no-splice.py [--runs N] [--size SIZE]

  X F | pipe_ref read --splice, for X = pipespeed cat, PIPESPEED_NO_SPLICE=1
  pipespeed cat, GNU cat. Runs alternate, flipping the order every run;
  medians. Data and references as bench/cat-vs.py prepares them.
"""
import argparse

from benchlib import alternate, gib_s_of_reader, header, medians, parse_size, prepare, print_samples


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--size", default="4G")
    p.add_argument("--text-size", default="512M")
    args = p.parse_args()
    args.size, args.text_size = parse_size(args.size), parse_size(args.text_size)
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
