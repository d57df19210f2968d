module courier/crosscheck/goparse

go 1.19
