module courier/benchmarks/sink

go 1.19
