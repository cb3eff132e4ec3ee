module github.com/newtricks/newtricks

go 1.26
