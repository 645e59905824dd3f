from radixviz.cli import main

main()
