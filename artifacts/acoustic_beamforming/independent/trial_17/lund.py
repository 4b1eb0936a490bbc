import numpy as np
FS=16000
def lundeby(e, t0, k=160, nfrac=0.1, iters=5, comp=True, margin=10.0):
    """return EDC (dB) from t0 using Lundeby-style truncation"""
    N=len(e)
    n=e[-int(nfrac*N):].mean()
    sm=np.convolve(e,np.ones(k)/k,'same')
    db=10*np.log10(sm+1e-300); ndb=10*np.log10(n)
    pk=int(np.argmax(sm))
    # initial regression from peak to first point above noise+margin
    idx=np.nonzero(db[pk:]<=ndb+margin)[0]
    end=pk+(idx[0] if len(idx) else N-pk)
    if end-pk<3: end=min(N,pk+3)
    t=np.arange(N)/FS
    A=np.polyfit(t[pk:end],db[pk:end],1)
    cross=int(np.clip((ndb-A[1])/A[0]*FS,pk+1,N)) if A[0]<0 else N
    for _ in range(iters):
        # noise from point 5 dB below crossing level onwards... use region after cross + 10dB decay worth
        dt=int(-10/A[0]*FS) if A[0]<0 else N
        st=min(N-int(0.1*N), cross+dt)
        st=max(st,cross)
        n=e[st:].mean() if st<N-10 else e[-int(nfrac*N):].mean()
        ndb=10*np.log10(n)
        lo=pk; hi_idx=np.nonzero(db[pk:]<=ndb+margin)[0]
        hi=pk+(hi_idx[0] if len(hi_idx) else N-pk)
        if hi-lo<3: break
        A=np.polyfit(t[lo:hi],db[lo:hi],1)
        if A[0]>=0: cross=N; break
        newc=int(np.clip((ndb-A[1])/A[0]*FS,pk+1,N))
        if abs(newc-cross)<2: cross=newc; break
        cross=newc
    ee=e[t0:cross]
    s=np.cumsum(ee[::-1])[::-1]
    if comp and A[0]<0:
        B=A[0]*np.log(10)/10  # energy decay rate per s (negative)
        Ec=10**((A[0]*cross/FS+A[1])/10)*0+sm[cross-1] if False else 10**((A[0]*(cross/FS)+A[1])/10)
        s=s+Ec*FS/(-B)/FS*FS/FS* (1.0) * (1.0/ (1.0)) * (1/FS)*FS if False else s+Ec/(-B)*FS*(1.0/FS)*FS/FS*FS/FS*1.0/1.0 if False else s+Ec/(-B)*FS/FS*FS/FS*FS/FS*FS/FS*1 if False else s+Ec/(1-np.exp(B/FS))
    return 10*np.log10(np.maximum(s,1e-300)/s[0]), cross
