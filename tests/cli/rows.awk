# awk -v rows=N -f rows.awk > FILE.libsvm: N logistic rows of 10 dense features, seeded.
BEGIN {
  srand(1)
  for (i = 0; i < rows; ++i) {
    printf "%d", (rand() < 0.5 ? -1 : 1)
    for (j = 1; j <= 10; ++j) printf " %d:%.6f", j, rand()
    printf "\n"
  }
}
