# Conveniences; tasks.py is the source of truth (README's quick start).
.PHONY: run test bench
run:
	python3 tasks.py run
test:
	python3 tasks.py test
bench:
	python3 tasks.py bench
