"""Files written so that readers never see a part: the one atomic writer, and large files shared by hard links."""
