-- CreateTable
CREATE TABLE "bank_polls" (
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "as_of" TIMESTAMPTZ(3) NOT NULL,
    "credited" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bank_polls_pkey" PRIMARY KEY ("due_at")
);
