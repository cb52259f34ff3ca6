"""`python -m seqc` (also the `seqc-py` console script of a pip install):
compile a .seq model to a shared library, or print one stage of it, with the
in-process compiler of the package.

    python -m seqc model.seq -o libmodel.so [-D name=value ...] [-O 3]
    python -m seqc model.seq --emit seq|manifest|linalg|llvm-ir|...
    python -m seqc model.seq --entry decode ...   (that entry alone)
"""

import argparse
import sys

import seqc


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m seqc",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("source", help="the .seq file")
    parser.add_argument("-o", dest="output", help="the shared library")
    parser.add_argument("--emit", choices=seqc.STAGES,
                        help="print this stage instead of linking")
    parser.add_argument("-D", dest="defines", action="append", default=[],
                        metavar="NAME=VALUE", help="a hyperparameter")
    parser.add_argument("-O", dest="opt_level", type=int, default=3,
                        choices=range(4))
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--mattr")
    parser.add_argument("--mcpu")
    parser.add_argument("--remarks", action="store_true")
    parser.add_argument("--entry", metavar="NAME",
                        help="compile only this entry of a model with "
                             "several (def decode), as its one function")
    args = parser.parse_args(argv)
    defines = {}
    for define in args.defines:
        name, eq, value = define.partition("=")
        if not name or not eq:
            parser.error("-D expects name=value, got %r" % define)
        defines[name] = value
    if not args.emit and not args.output:
        parser.error("give -o LIBRARY or --emit STAGE")
    options = dict(target=args.target, opt_level=args.opt_level,
                   defines=defines, mcpu=args.mcpu, mattr=args.mattr,
                   remarks=args.remarks, entry=args.entry)
    try:
        if args.emit:
            sys.stdout.write(seqc.emit(args.source, args.emit, **options))
        else:
            module = seqc.compile(args.source, **options)
            sys.stderr.write(module.log)
            module.save(args.output)
    except seqc.CompileError as error:
        sys.stderr.write(str(error) + "\n")
        return 1
    except OSError as error:
        sys.stderr.write("seqc: error: %s\n" % error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
