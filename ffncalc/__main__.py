from ffncalc.cli import main

main()
