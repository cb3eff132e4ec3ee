//go:build !amd64

package image

func yccIndex(y, cb, cr []byte, ri, gi, bi []uint16) { yccIndexGo(y, cb, cr, ri, gi, bi) }
