from ffncalc.cli import run

run()
